/**
 * Files, as Node's synchronous `fs` names them, over `wasi:filesystem`: a module reads
 * and writes files only inside the directories its grant opens (the shim preopens each
 * at its own absolute path). A relative path starts at the node's working directory,
 * which the shim gives the module. A path outside every granted directory fails with
 * `ENOTCAPABLE`, as it does for a Python or Rust module, and does not exist for
 * `existsSync`.
 *
 * Errors are `FsError`s whose `code` is Node's (`ENOENT`, `EACCES`, `EEXIST`, `EISDIR`,
 * …) and whose `path` is the path given.
 */

import { environment, payload, preopens } from './host.js';

/** A file operation's failure: `code` as Node's, `path` the path given. */
export class FsError extends Error {
  constructor(code, syscall, path) {
    super(`${code}: ${DESCRIPTIONS[code] ?? code}, ${syscall} '${path}'`);
    this.name = 'FsError';
    this.code = code;
    this.syscall = syscall;
    this.path = path;
  }
}

/** `wasi:filesystem`'s error codes, by the POSIX name Node gives them. */
const CODES = {
  access: 'EACCES',
  'not-permitted': 'EPERM',
  exist: 'EEXIST',
  'no-entry': 'ENOENT',
  'is-directory': 'EISDIR',
  'not-directory': 'ENOTDIR',
  'read-only': 'EROFS',
  'not-empty': 'ENOTEMPTY',
  'cross-device': 'EXDEV',
  busy: 'EBUSY',
  'insufficient-space': 'ENOSPC',
  'name-too-long': 'ENAMETOOLONG',
  loop: 'ELOOP',
  invalid: 'EINVAL',
  io: 'EIO',
  unsupported: 'ENOTSUP',
};

const DESCRIPTIONS = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EEXIST: 'file already exists',
  ENOENT: 'no such file or directory',
  EISDIR: 'illegal operation on a directory',
  ENOTDIR: 'not a directory',
  EROFS: 'read-only file system',
  ENOTCAPABLE: 'capabilities insufficient (not in a granted directory)',
};

function fail(error, syscall, path) {
  if (error instanceof FsError) {
    return error;
  }
  const code = payload(error);
  return new FsError(typeof code === 'string' ? CODES[code] ?? code.toUpperCase() : 'EIO', syscall, path);
}

function drop(resource) {
  const dispose = resource[Symbol.dispose ?? Symbol.for('dispose')];
  if (typeof dispose === 'function') {
    dispose.call(resource);
  }
}

/** The node's working directory, where relative paths start. */
export function cwd() {
  const initial = environment.initialCwd();
  if (initial) {
    return initial;
  }
  const pwd = environment.getEnvironment().find(([k]) => k === 'PWD');
  return pwd ? pwd[1] : '/';
}

/** `path` made absolute (from `cwd()`) and normalised: no `.`, `..` or double slash. */
export function resolve(path) {
  const whole = path.startsWith('/') ? path : `${cwd()}/${path}`;
  const parts = [];
  for (const part of whole.split('/')) {
    if (part === '..') {
      parts.pop();
    } else if (part !== '' && part !== '.') {
      parts.push(part);
    }
  }
  return `/${parts.join('/')}`;
}

/** The directory part of a path, as Python's `os.path.dirname` gives it. */
export function dirname(path) {
  const at = path.lastIndexOf('/');
  if (at < 0) {
    return '';
  }
  const head = path.slice(0, at + 1);
  return /^\/+$/.test(head) ? head : head.replace(/\/+$/, '');
}

/** The last part of a path, as Python's `os.path.basename` gives it. */
export function basename(path) {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The granted directory holding `path`, and the path inside it. */
function locate(path, syscall) {
  const abs = resolve(path);
  let best;
  for (const [dir, name] of preopens.getDirectories()) {
    const root = name === '/' ? '' : name.replace(/\/+$/, '');
    if ((abs === root || abs.startsWith(`${root}/`)) && (!best || root.length > best.root.length)) {
      best = { dir, root };
    }
  }
  if (!best) {
    throw new FsError('ENOTCAPABLE', syscall, path);
  }
  const rel = abs.slice(best.root.length).replace(/^\/+/, '');
  return { dir: best.dir, rel: rel === '' ? '.' : rel };
}

const FOLLOW = { symlinkFollow: true };
const NOFOLLOW = { symlinkFollow: false };

/** What `statSync` and `lstatSync` answer. */
class Stats {
  constructor(stat) {
    this.type = stat.type;
    this.size = Number(stat.size);
    this.nlink = Number(stat.linkCount);
  }
  isFile() {
    return this.type === 'regular-file';
  }
  isDirectory() {
    return this.type === 'directory';
  }
  isSymbolicLink() {
    return this.type === 'symbolic-link';
  }
}

/** The file's kind and size, following a final symlink. */
export function statSync(path) {
  const { dir, rel } = locate(path, 'stat');
  try {
    return new Stats(dir.statAt(FOLLOW, rel));
  } catch (e) {
    throw fail(e, 'stat', path);
  }
}

/** The file's kind and size, not following a final symlink. */
export function lstatSync(path) {
  const { dir, rel } = locate(path, 'lstat');
  try {
    return new Stats(dir.statAt(NOFOLLOW, rel));
  } catch (e) {
    throw fail(e, 'lstat', path);
  }
}

/** Whether `path` exists (following symlinks); false outside the granted directories. */
export function existsSync(path) {
  try {
    statSync(path);
    return true;
  } catch (e) {
    if (e instanceof FsError) {
      return false;
    }
    throw e;
  }
}

function open(path, syscall, openFlags, descriptorFlags) {
  const { dir, rel } = locate(path, syscall);
  try {
    return dir.openAt(FOLLOW, rel, openFlags, descriptorFlags);
  } catch (e) {
    throw fail(e, syscall, path);
  }
}

/** The file's bytes, or its text when `encoding` (only `'utf-8'`/`'utf8'`) is given. */
export function readFileSync(path, encoding) {
  const file = open(path, 'open', {}, { read: true });
  const chunks = [];
  let total = 0;
  try {
    for (;;) {
      const [data, end] = file.read(65536n, BigInt(total));
      chunks.push(data);
      total += data.length;
      if (end || data.length === 0) {
        break;
      }
    }
  } catch (e) {
    throw fail(e, 'read', path);
  } finally {
    drop(file);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  const options = typeof encoding === 'object' && encoding !== null ? encoding.encoding : encoding;
  return options ? new TextDecoder(options).decode(bytes) : bytes;
}

function writeAll(file, data, path) {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  let at = 0;
  try {
    while (at < bytes.length) {
      at += Number(file.write(bytes.subarray(at), BigInt(at)));
    }
  } catch (e) {
    throw fail(e, 'write', path);
  }
}

/**
 * Writes `data` (a string, as UTF-8, or bytes) to the file, created when missing and
 * emptied first; `{flag: 'wx'}` refuses a file that exists (`EEXIST`).
 */
export function writeFileSync(path, data, options = {}) {
  const exclusive = options.flag === 'wx';
  const file = open(path, 'open', { create: true, truncate: !exclusive, exclusive }, { write: true });
  try {
    writeAll(file, data, path);
  } finally {
    drop(file);
  }
}

/** Renames `from` to `to` (over it when it exists); both must be granted. */
export function renameSync(from, to) {
  const a = locate(from, 'rename');
  const b = locate(to, 'rename');
  try {
    a.dir.renameAt(a.rel, b.dir, b.rel);
  } catch (e) {
    throw fail(e, 'rename', from);
  }
}

/** Removes a file (not a directory). */
export function unlinkSync(path) {
  const { dir, rel } = locate(path, 'unlink');
  try {
    dir.unlinkFileAt(rel);
  } catch (e) {
    throw fail(e, 'unlink', path);
  }
}

/**
 * Creates a new empty file in `dir` whose name starts with `prefix`, as Python's
 * `tempfile.mkstemp(dir=…, prefix=…)`; returns its path.
 */
export function mkstempSync(dir, prefix = 'tmp', suffix = '') {
  const letters = 'abcdefghijklmnopqrstuvwxyz0123456789_';
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const random = crypto.getRandomValues(new Uint8Array(8));
    const name = Array.from(random, (b) => letters[b % letters.length]).join('');
    const path = `${dir === '' ? '.' : dir.replace(/\/+$/, '')}/${prefix}${name}${suffix}`;
    try {
      writeFileSync(path, '', { flag: 'wx' });
      return path;
    } catch (e) {
      if (!(e instanceof FsError) || e.code !== 'EEXIST') {
        throw e;
      }
    }
  }
  throw new FsError('EEXIST', 'mkstemp', dir);
}
