/**
 * Write sandball modules in JavaScript: an `AnsibleModule` for WebAssembly components,
 * built with componentize-js (`bin/build.mjs`).
 *
 * ```js
 * import { AnsibleModule, fs } from 'sandball-module';
 * export function main() {
 *   const module = new AnsibleModule();
 *   module.exitJson({ changed: false, msg: fs.readFileSync(module.params.path, 'utf-8') });
 * }
 * ```
 *
 * Arguments are validated by the Rust SDK's code, which the shim runs for the module
 * (`sandball:host/arguments`); programs run through `sandball:host/process`, file
 * modes and owners through `sandball:host/posix`; files are read and written with `fs`,
 * inside what the grant opens.
 */

export { AnsibleModule, ModuleExit } from './basic.js';
export * as fs from './fs.js';
export { split as shlexSplit } from './shlex.js';
