/**
 * Command lines as Python's `shlex.split` (POSIX mode) splits them, and `~`/`$VAR`
 * expansion as `os.path.expanduser`/`os.path.expandvars` do it: what ansible-core's
 * `run_command` does to a command given as a string, which the JavaScript standard
 * library has no equivalent of.
 */

/** The words of `line`: quotes and backslashes as a POSIX shell reads them. */
export function split(line) {
  const words = [];
  let word = null;
  let quote = null;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") {
        quote = null;
      } else {
        word += c;
      }
    } else if (quote === '"') {
      if (c === '"') {
        quote = null;
      } else if (c === '\\' && i + 1 < line.length && '\\"'.includes(line[i + 1])) {
        i += 1;
        word += line[i];
      } else {
        word += c;
      }
    } else if (/\s/.test(c)) {
      if (word !== null) {
        words.push(word);
        word = null;
      }
    } else {
      word = word ?? '';
      if (c === "'" || c === '"') {
        quote = c;
      } else if (c === '\\') {
        if (i + 1 >= line.length) {
          throw new Error('No escaped character');
        }
        i += 1;
        word += line[i];
      } else {
        word += c;
      }
    }
  }
  if (quote !== null) {
    throw new Error('No closing quotation');
  }
  if (word !== null) {
    words.push(word);
  }
  return words;
}

/** `~` and `~/…` as `os.path.expanduser` expands them (from `HOME`). */
export function expandUser(word, env) {
  if (!word.startsWith('~')) {
    return word;
  }
  const end = word.indexOf('/') < 0 ? word.length : word.indexOf('/');
  if (end !== 1 || env.HOME === undefined) {
    return word;
  }
  return env.HOME.replace(/\/+$/, '') + word.slice(1) || '/';
}

/** `$NAME` and `${NAME}` as `os.path.expandvars` expands them: unknown ones are kept. */
export function expandVars(word, env) {
  return word.replace(/\$(\w+|\{[^}]*\})/g, (all, name) => {
    const key = name.startsWith('{') ? name.slice(1, -1) : name;
    return Object.prototype.hasOwnProperty.call(env, key) ? env[key] : all;
  });
}
