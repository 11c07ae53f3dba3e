#!/usr/bin/env node
/**
 * Builds a JavaScript module into a sandball module component.
 *
 *     node guest-sdk/js/bin/build.mjs --manifest manifest.json module.js -o name.wasm
 *
 * The module is an ES module exporting `main()`, which makes an `AnsibleModule` (from
 * `sandball-module`, this package) and ends with `exitJson` or `failJson`. rolldown
 * bundles it with this package (`sandball-module` is always this package's copy, the
 * one matching the build) and what else it imports; componentize-js makes the bundle a
 * component of world `component` of `guest-sdk/wit` (`component-without-http`, and
 * the engine's `fetch` left out, when the manifest asks for no network), pre-running
 * the module's top level (wizer) so that its imports are paid at build time; then
 * `sandball module pack` (on PATH, or `--sandball`) embeds the manifest in the
 * component's `sandball:manifest` section. The module validates its arguments against
 * the same manifest, which the build also gives it: pack it with no other.
 *
 * componentize-js and rolldown are this package's npm dependencies: they are found in
 * `--tools DIR` (a node_modules directory), else in a node_modules directory above
 * the working directory or above this file.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const HERE = dirname(realpathSync(new URL(import.meta.url).pathname));
const SDK = resolve(HERE, '..');
const WIT = resolve(SDK, '..', 'wit');

function die(message) {
  console.error(`build.mjs: ${message}`);
  process.exit(1);
}

/** The node_modules directories to find the tools in, nearest first. */
function toolDirs(given) {
  if (given) {
    return [resolve(given)];
  }
  const dirs = [];
  for (let dir of [process.cwd(), SDK]) {
    for (;;) {
      dirs.push(join(dir, 'node_modules'));
      const up = dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  return dirs;
}

/** Imports a tool's entry file from the first node_modules that has it. */
async function tool(dirs, name, entry) {
  for (const dir of dirs) {
    const path = join(dir, name, entry);
    if (existsSync(path)) {
      return import(pathToFileURL(path).href);
    }
  }
  die(`${name} not found in ${dirs.slice(0, 3).join(', ')}…: install this package's dependencies (npm install) or give --tools DIR`);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    manifest: { type: 'string' },
    output: { type: 'string', short: 'o' },
    sandball: { type: 'string', default: 'sandball' },
    tools: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help || positionals.length !== 1 || !values.manifest || !values.output) {
  console.log('usage: build.mjs --manifest manifest.json module.js -o name.wasm [--sandball PATH] [--tools NODE_MODULES]');
  process.exit(values.help ? 0 : 2);
}
const modulePath = resolve(positionals[0]);
const manifestText = readFileSync(values.manifest, 'utf-8');
let manifest;
try {
  manifest = JSON.parse(manifestText);
} catch (e) {
  die(`${values.manifest}: not valid JSON: ${e.message}`);
}
if (manifest === null || typeof manifest !== 'object' || !manifest.name) {
  die(`${values.manifest}: a manifest is a JSON object with a name`);
}

const dirs = toolDirs(values.tools);
const { rolldown } = await tool(dirs, 'rolldown', 'dist/index.mjs');
const { componentize } = await tool(dirs, '@bytecodealliance/componentize-js', 'src/componentize.js');

const work = mkdtempSync(join(tmpdir(), 'sandball-js-'));
try {
  const app = join(work, 'app.js');
  writeFileSync(app, `// The component's wasi:cli/run export (written by guest-sdk/js/bin/build.mjs).
import { runModule } from ${JSON.stringify(join(SDK, 'src', 'entry.js'))};
import { main } from ${JSON.stringify(modulePath)};

const MANIFEST = ${JSON.stringify(manifestText)};

export const run = {
  run() {
    return runModule(main, MANIFEST);
  },
};
`);
  const bundle = await rolldown({
    input: app,
    external: [/^wasi:/, /^sandball:/],
    resolve: { alias: { 'sandball-module': join(SDK, 'src', 'index.js') } },
    logLevel: 'warn',
  });
  const bundled = join(work, `${basename(modulePath, '.js').replace(/\W/g, '_')}.bundle.js`);
  await bundle.write({ file: bundled, format: 'esm', codeSplitting: false });
  await bundle.close();

  // componentize-js keeps every import of the world: wasi:http only for a module whose
  // manifest asks for the network.
  const net = (manifest.capabilities ?? []).some((c) => c && c.kind === 'net');
  const { component } = await componentize({
    sourcePath: bundled,
    witPath: WIT,
    worldName: net ? 'component' : 'component-without-http',
    disableFeatures: net ? ['fetch-event'] : ['http', 'fetch-event'],
  });
  const bare = join(work, 'bare.wasm');
  writeFileSync(bare, component);
  const pack = [values.sandball, 'module', 'pack', '--manifest', values.manifest, bare, '-o', values.output];
  const done = spawnSync(pack[0], pack.slice(1), { stdio: 'inherit' });
  if (done.status !== 0) {
    die(`sandball module pack failed (${done.error ? done.error.message : `exit code ${done.status}`}): ${pack.join(' ')}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
