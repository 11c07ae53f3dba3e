// conf_line, in JavaScript: set or remove one key=value setting of a configuration
// file, with check mode, diff mode and validate. The same module as
// examples/modules/python/conf_line.py, line for line, built into a sandboxed
// component with componentize-js: see docs/WRITING-MODULES.md.
// SPDX-License-Identifier: Apache-2.0

import { AnsibleModule, fs } from 'sandball-module';

/** The value the line sets for key, or null when it sets something else. */
function settingOf(line, key, separator) {
  const stripped = line.trim();
  if (!stripped || stripped.startsWith('#') || !stripped.includes(separator)) {
    return null;
  }
  const at = stripped.indexOf(separator);
  const name = stripped.slice(0, at);
  const value = stripped.slice(at + separator.length);
  return name.trim() === key ? value.trim() : null;
}

/** The lines of text, each with its line ending (Python's splitlines(True)). */
function linesOf(text) {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

export function main() {
  const module = new AnsibleModule({
    argumentSpec: {
      path: { type: 'path', required: true, aliases: ['dest'] },
      key: { type: 'str', required: true },
      value: { type: 'str' },
      state: { type: 'str', choices: ['present', 'absent'], default: 'present' },
      separator: { type: 'str', default: '=' },
      create: { type: 'bool', default: false },
      validate: { type: 'str' },
    },
    supportsCheckMode: true,
  });
  const { path, key, value, separator } = module.params;
  const present = module.params.state === 'present';

  let before;
  if (fs.existsSync(path) && fs.statSync(path).isDirectory()) {
    module.failJson({ rc: 256, msg: `Path ${path} is a directory !` });
  }
  if (fs.existsSync(path)) {
    before = fs.readFileSync(path, 'utf-8');
  } else if (present && module.params.create) {
    before = '';
  } else {
    module.failJson({ rc: 257, msg: `Path ${path} does not exist !` });
  }

  const lines = linesOf(before);
  const wanted = `${key}${separator}${value}\n`;
  const afterLines = [];
  let placed = false;
  for (const line of lines) {
    if (settingOf(line, key, separator) === null) {
      afterLines.push(line);
    } else if (present && !placed) {
      afterLines.push(wanted);
      placed = true;
    }
  }
  if (present && !placed) {
    if (afterLines.length && !afterLines[afterLines.length - 1].endsWith('\n')) {
      afterLines[afterLines.length - 1] += '\n';
    }
    afterLines.push(wanted);
  }
  const after = afterLines.join('');

  const changed = after !== before;
  const had = lines.some((line) => settingOf(line, key, separator) !== null);
  let msg;
  if (!changed) {
    msg = '';
  } else if (present) {
    msg = had ? 'line replaced' : 'line added';
  } else {
    msg = `${lines.length - afterLines.length} line(s) removed`;
  }

  const result = { changed, msg, path };
  if (module.diff) {
    result.diff = { before, after, before_header: path, after_header: path };
  }

  if (changed && !module.checkMode) {
    const tmp = fs.mkstempSync(fs.dirname(path) || '.', '.conf_line');
    fs.writeFileSync(tmp, after);
    if (module.params.validate) {
      const validate = module.params.validate;
      if (!validate.includes('%s')) {
        fs.unlinkSync(tmp);
        module.failJson({ msg: `validate must contain %s: ${validate}` });
      }
      const [rc, out, err] = module.runCommand(validate.replaceAll('%s', tmp));
      if (rc !== 0) {
        fs.unlinkSync(tmp);
        module.failJson({ msg: 'failed to validate', exit_status: rc, stdout: out, stderr: err });
      }
    }
    module.atomicMove(tmp, path);
  }

  module.exitJson(result);
}
