/**
 * The WIT imports the package uses, and the small conversions every caller needs:
 * the error a host call threw, as text, and whether the grant refused it.
 *
 * componentize-js gives each WIT interface as an ES module of camelCase functions; a
 * function returning `result<T, E>` returns `T` or throws an error whose `payload` is
 * `E` (a `sandball:host/types.error` record for the sandball interfaces, an
 * `error-code` string for `wasi:filesystem`).
 */

export * as arguments_ from 'sandball:host/arguments@0.1.0';
export * as process from 'sandball:host/process@0.1.0';
export * as posix from 'sandball:host/posix@0.1.0';
export * as environment from 'wasi:cli/environment@0.2.12';
export * as stdin from 'wasi:cli/stdin@0.2.12';
export * as stdout from 'wasi:cli/stdout@0.2.12';
export * as stderr from 'wasi:cli/stderr@0.2.12';
export * as preopens from 'wasi:filesystem/preopens@0.2.12';

/** The payload of an error a host call threw (the error itself when it has none). */
export function payload(error) {
  return error !== null && typeof error === 'object' && 'payload' in error ? error.payload : error;
}

/** The text of a host call's error (`sandball:host/types.error`'s message). */
export function message(error) {
  const p = payload(error);
  if (p !== null && typeof p === 'object' && typeof p.message === 'string') {
    return p.message;
  }
  return String(p);
}

/** A host call's error record, or undefined when the error is of another kind. */
export function hostError(error) {
  const p = payload(error);
  return p !== null && typeof p === 'object' && 'denied' in p ? p : undefined;
}
