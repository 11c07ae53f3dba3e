#!/usr/bin/python
# -*- coding: utf-8 -*-
# An ordinary Ansible module (it runs under ansible-core as it is), which sandball
# also runs as a sandboxed WebAssembly component: see docs/WRITING-MODULES.md.
# SPDX-License-Identifier: Apache-2.0

from __future__ import annotations

DOCUMENTATION = r"""
module: conf_line
short_description: Set or remove one C(key=value) setting of a configuration file
description:
  - Makes the file hold the setting C(key<separator>value) once, replacing the line that
    sets the key, or removes every line setting it. Lines that are comments are left.
options:
  path:
    description: The configuration file.
    type: path
    required: true
    aliases: [dest]
  key:
    description: The setting's name.
    type: str
    required: true
  value:
    description: Its value; required with O(state=present).
    type: str
  state:
    description: Whether the setting should be there.
    type: str
    choices: [present, absent]
    default: present
  separator:
    description: What stands between the key and the value.
    type: str
    default: "="
  create:
    description: Create the file when it does not exist.
    type: bool
    default: false
  validate:
    description: A command run on the new file before it replaces the old one; C(%s) is its path.
    type: str
attributes:
  check_mode: {support: full}
  diff_mode: {support: full}
"""

EXAMPLES = r"""
- conf_line:
    path: /etc/app.conf
    key: port
    value: "8080"
"""

RETURN = r"""
msg:
  description: What was done.
  type: str
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule


def setting_of(line, key, separator):
    """The value the line sets for key, or None when it sets something else."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#") or separator not in stripped:
        return None
    name, _, value = stripped.partition(separator)
    return value.strip() if name.strip() == key else None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True, aliases=["dest"]),
            key=dict(type="str", required=True),
            value=dict(type="str"),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            separator=dict(type="str", default="="),
            create=dict(type="bool", default=False),
            validate=dict(type="str"),
        ),
        required_if=[["state", "present", ["value"]]],
        supports_check_mode=True,
    )
    path = module.params["path"]
    key = module.params["key"]
    value = module.params["value"]
    separator = module.params["separator"]
    present = module.params["state"] == "present"

    if os.path.isdir(path):
        module.fail_json(rc=256, msg="Path %s is a directory !" % path)
    if os.path.exists(path):
        with open(path, "r") as f:
            before = f.read()
    elif present and module.params["create"]:
        before = ""
    else:
        module.fail_json(rc=257, msg="Path %s does not exist !" % path)

    lines = before.splitlines(True)
    wanted = "%s%s%s\n" % (key, separator, value)
    after_lines = []
    placed = False
    for line in lines:
        if setting_of(line, key, separator) is None:
            after_lines.append(line)
        elif present and not placed:
            after_lines.append(wanted)
            placed = True
    if present and not placed:
        if after_lines and not after_lines[-1].endswith("\n"):
            after_lines[-1] += "\n"
        after_lines.append(wanted)
    after = "".join(after_lines)

    changed = after != before
    had = any(setting_of(line, key, separator) is not None for line in lines)
    if not changed:
        msg = ""
    elif present:
        msg = "line replaced" if had else "line added"
    else:
        msg = "%d line(s) removed" % (len(lines) - len(after_lines))

    result = dict(changed=changed, msg=msg, path=path)
    if module._diff:
        result["diff"] = dict(before=before, after=after, before_header=path, after_header=path)

    if changed and not module.check_mode:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".conf_line")
        with os.fdopen(fd, "w") as f:
            f.write(after)
        if module.params["validate"]:
            validate = module.params["validate"]
            if "%s" not in validate:
                os.remove(tmp)
                module.fail_json(msg="validate must contain %%s: %s" % validate)
            rc, out, err = module.run_command(validate % tmp)
            if rc != 0:
                os.remove(tmp)
                module.fail_json(msg="failed to validate", exit_status=rc, stdout=out, stderr=err)
        module.atomic_move(tmp, path)

    module.exit_json(**result)


if __name__ == "__main__":
    main()
