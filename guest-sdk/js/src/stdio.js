/** The module's stdin, stdout and stderr (`wasi:cli`), whole. */

import { stderr, stdin, stdout } from './host.js';

/** All of stdin, as text (invalid UTF-8 replaced). */
export function readStdin() {
  const stream = stdin.getStdin();
  const chunks = [];
  let total = 0;
  for (;;) {
    let chunk;
    try {
      chunk = stream.blockingRead(65536n);
    } catch {
      // `closed`: the end of the input (the shim gives it whole).
      break;
    }
    chunks.push(chunk);
    total += chunk.length;
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(bytes);
}

/** WASI's blocking writes take at most 4096 bytes at a time. */
function writeAll(stream, text) {
  const bytes = new TextEncoder().encode(text);
  for (let at = 0; at < bytes.length; at += 4096) {
    stream.blockingWriteAndFlush(bytes.subarray(at, at + 4096));
  }
}

/** Writes `text` to stdout. */
export function writeStdout(text) {
  writeAll(stdout.getStdout(), text);
}

/** Writes `text` to stderr. */
export function writeStderr(text) {
  writeAll(stderr.getStderr(), text);
}
