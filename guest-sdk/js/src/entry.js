/**
 * The component's entry point (`wasi:cli/run`, written by `bin/build.mjs`): reads the
 * task's arguments, runs the module's `main` and turns its end into the exit code.
 */

import { ModuleExit, state } from './basic.js';
import { readStdin, writeStderr, writeStdout } from './stdio.js';

/** `wasi:cli/run`'s failure (exit code 1): an `err` with no payload. */
const FAILED = { tag: 'err', val: undefined };

/**
 * Runs `main` (the module's own, which makes an `AnsibleModule` and ends with
 * `exitJson` or `failJson`; it may be async) with the task's arguments from stdin.
 * `manifest` is the manifest's JSON text. Returns what `wasi:cli/run` returns.
 */
export async function runModule(main, manifest) {
  state.manifest = manifest;
  state.stdin = readStdin();
  try {
    await main();
  } catch (e) {
    if (e instanceof ModuleExit) {
      return e.code === 0 ? undefined : FAILED;
    }
    const trace = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ''}` : String(e);
    writeStderr(`${trace}\n`);
    const msg = `MODULE FAILURE: ${e instanceof Error ? e.message : String(e)}`;
    writeStdout(`${JSON.stringify({ failed: true, msg, exception: trace })}\n`);
    return FAILED;
  }
  writeStdout(`${JSON.stringify({ failed: true, msg: 'the module ended without exitJson or failJson' })}\n`);
  return FAILED;
}
