/**
 * `AnsibleModule`: what an Ansible module's code calls, over the sandball host
 * interface. Arguments are validated by the Rust SDK's own code, which the shim runs
 * for the module (`sandball:host/arguments`), against the manifest embedded in the
 * component: types, aliases, defaults, choices, dependencies, `no_log` masking,
 * check-mode refusal and the internal `_ansible_*` arguments behave as for a Rust or
 * Python module, word for word.
 */

import { arguments_, environment, hostError, message, posix, process } from './host.js';
import * as fs from './fs.js';
import { expandUser, expandVars, split } from './shlex.js';
import { writeStdout } from './stdio.js';

/** The run's state, set by `runModule` before the module's `main` runs. */
export const state = { manifest: null, stdin: null };

/**
 * Thrown by `exitJson`/`failJson` once the result is printed, as Ansible's
 * `sys.exit`: `code` is the exit code. `runModule` catches it.
 */
export class ModuleExit extends Error {
  constructor(code) {
    super(`module exit ${code}`);
    this.name = 'ModuleExit';
    this.code = code;
  }
}

function print(text, code) {
  writeStdout(`${text}\n`);
  throw new ModuleExit(code);
}

function environ() {
  return Object.fromEntries(environment.getEnvironment());
}

/**
 * The module's arguments and what it reports, as ansible-core's `AnsibleModule`, with
 * JavaScript's names (`exitJson` for `exit_json`, `checkMode` for `check_mode`…).
 *
 * The argument spec applied is the manifest's. `argumentSpec` and `supportsCheckMode`,
 * when given, are checked against it: they must name the same arguments and say the
 * same about check mode (the module fails saying how they differ).
 */
export class AnsibleModule {
  constructor({ argumentSpec, supportsCheckMode } = {}) {
    if (state.manifest === null || state.stdin === null) {
      throw new Error('an AnsibleModule is made inside a component run only (runModule)');
    }
    this._warnings = [];
    this._deprecations = [];
    this._secrets = [];
    this._started = false;
    let answer;
    try {
      answer = arguments_.start(state.manifest, state.stdin, environment.getEnvironment());
    } catch (refused) {
      // A validation failure or a check-mode skip: the result, printed as it is.
      const text = message(refused);
      let failed = true;
      try {
        failed = JSON.parse(text).failed === true;
      } catch {
        // not JSON: a failure
      }
      print(text, failed ? 1 : 0);
    }
    const settings = JSON.parse(answer);
    this._started = true;
    /** The validated arguments: every one of the spec, with its default or null. */
    this.params = settings.params;
    this.checkMode = settings.check_mode;
    this.diff = settings.diff;
    this.noLog = settings.no_log;
    this.verbosity = settings.verbosity;
    this.moduleName = settings.module_name;
    const declared = JSON.parse(state.manifest);
    if (argumentSpec !== undefined) {
      const ours = Object.keys(argumentSpec).sort();
      const theirs = Object.keys(declared.argument_spec ?? {}).sort();
      if (ours.join(',') !== theirs.join(',')) {
        this.failJson({
          msg: `the module's argumentSpec and its manifest's name different arguments: ${ours.join(', ')} in the module, ${theirs.join(', ')} in the manifest`,
        });
      }
    }
    if (supportsCheckMode !== undefined && supportsCheckMode !== (declared.supports_check_mode === true)) {
      this.failJson({
        msg: `the module says supportsCheckMode=${supportsCheckMode}, its manifest ${declared.supports_check_mode === true}`,
      });
    }
  }

  // Reporting ------------------------------------------------------------------------

  /** Adds a warning to the result. */
  warn(warning) {
    this._warnings.push(String(warning));
  }

  /** Adds a deprecation notice to the result. */
  deprecate(msg, { version, date, collectionName } = {}) {
    const entry = { msg };
    if (version !== undefined) entry.version = String(version);
    if (date !== undefined) entry.date = String(date);
    if (collectionName !== undefined) entry.collection_name = collectionName;
    this._deprecations.push(entry);
  }

  /** Secrets masked wherever they appear in the result: `noLogValues.add(secret)`. */
  get noLogValues() {
    const secrets = this._secrets;
    return {
      add(value) {
        const text = String(value);
        if (text !== '' && !secrets.includes(text)) secrets.push(text);
      },
    };
  }

  /** Prints the result and ends the module (exit code 0). */
  exitJson(result = {}) {
    this._finish({ ...result }, 0);
  }

  /**
   * Prints a failure and ends the module (exit code 1): `failJson({msg, ...fields})`,
   * or `failJson(msg, fields)`.
   */
  failJson(what, fields = {}) {
    const given = typeof what === 'string' ? { ...fields, msg: what } : { ...what };
    const { failed: _f, msg, ...rest } = given;
    this._finish({ failed: true, msg, ...rest }, 1);
  }

  _finish(result, code) {
    if (this._warnings.length) result.warnings = [...this._warnings, ...(result.warnings ?? [])];
    if (this._deprecations.length) {
      result.deprecations = [...this._deprecations, ...(result.deprecations ?? [])];
    }
    if (!this._started) print(JSON.stringify(result), code);
    let text;
    try {
      text = arguments_.finish(JSON.stringify(result), this._secrets);
    } catch (e) {
      text = JSON.stringify({ failed: true, msg: message(e) });
      code = 1;
    }
    print(text, code);
  }

  // Programs and files ---------------------------------------------------------------

  /**
   * Runs a program the grant allows, without a shell, as ansible-core's `run_command`:
   * `args` an array or a string (split as `shlex.split` does); returns
   * `[rc, stdout, stderr]`. A program the grant refuses fails the module with the
   * denial and rc 13 (EACCES), as ansible-core fails on an `OSError`.
   */
  runCommand(args, {
    checkRc = false, data, binaryData = false, cwd, environUpdate = {},
    useUnsafeShell = false, encoding = 'utf-8', expandUserAndVars = true,
  } = {}) {
    if (useUnsafeShell) {
      this.failJson({ msg: 'runCommand: useUnsafeShell is not available in a sandboxed module' });
    }
    let argv = (typeof args === 'string' ? split(args) : args)
      .filter((a) => a !== null && a !== undefined)
      .map(String);
    if (expandUserAndVars) {
      const env = environ();
      argv = argv.map((a) => expandUser(expandVars(a, env), env));
    }
    let stdin;
    if (data !== undefined && data !== null) {
      stdin = typeof data === 'string' ? new TextEncoder().encode(binaryData ? data : `${data}\n`) : data;
    }
    const env = Object.entries(environUpdate).map(([k, v]) => [String(k), String(v)]);
    let out;
    try {
      out = process.run({ argv, cwd, stdin, env });
    } catch (e) {
      const err = hostError(e);
      const rc = (err && err.errno) || (err && err.denied ? 13 : 1);
      this.failJson({ rc, msg: message(e), cmd: argv.join(' ') });
    }
    const decode = (bytes) => (encoding === null ? bytes : new TextDecoder(encoding).decode(bytes));
    const stdout = decode(out.stdout);
    const stderr = decode(out.stderr);
    if (out.rc !== 0 && checkRc) {
      this.failJson({ cmd: argv.join(' '), rc: out.rc, stdout, stderr, msg: String(stderr).trimEnd() });
    }
    return [out.rc, stdout, stderr];
  }

  /**
   * The program's name: the shim finds it on the node's PATH when it runs, and only
   * among the programs the grant allows (the sandbox cannot see PATH).
   */
  getBinPath(name) {
    return name;
  }

  /**
   * Renames `src` over `dest` (same directory), giving it `dest`'s mode and owner when
   * `dest` exists.
   */
  atomicMove(src, dest, { keepDestAttrs = true } = {}) {
    if (keepDestAttrs) {
      let st;
      try {
        st = posix.stat(dest, true);
      } catch (e) {
        this.failJson({ msg: `Unable to read ${dest}: ${message(e)}` });
      }
      if (st) {
        try {
          posix.chmod(src, st.mode);
          posix.chown(src, st.uid, st.gid, true);
        } catch {
          // as ansible-core: the move goes on with the new file's own attributes
        }
      }
    }
    try {
      fs.renameSync(src, dest);
    } catch (e) {
      this.failJson({ msg: `Unable to make ${src} into ${dest}: ${e.message}` });
    }
  }

  /** The node's temporary directory, when the grant opens it (`TMPDIR`). */
  tmpdir() {
    return environ().TMPDIR;
  }

  /** Copies `path` beside itself as Ansible names backups; returns the copy's path. */
  backupLocal(path) {
    const now = new Date();
    const two = (n) => String(n).padStart(2, '0');
    const stamp = `${now.getFullYear()}-${two(now.getMonth() + 1)}-${two(now.getDate())}@${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())}~`;
    const backup = `${path}.${Math.floor(Math.random() * 100000)}.${stamp}`;
    fs.writeFileSync(backup, fs.readFileSync(path), { flag: 'wx' });
    return backup;
  }
}
