// @NAME@: makes a file hold the given content. A sandball module in JavaScript: make it
// yours (docs/WRITING-MODULES.md says what `sandball-module` offers).

import { AnsibleModule, fs } from 'sandball-module';

export function main() {
  const module = new AnsibleModule({ supportsCheckMode: true });
  const { path, content } = module.params;
  const before = fs.existsSync(path) ? fs.readFileSync(path, 'utf-8') : '';
  const changed = before !== content;
  const result = { changed, path };
  if (changed && module.diff) {
    result.diff = { before, after: content };
  }
  if (changed && !module.checkMode) {
    fs.writeFileSync(path, content);
  }
  module.exitJson(result);
}
