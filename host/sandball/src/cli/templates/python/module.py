#!/usr/bin/python
# @NAME@: makes a file hold the given content. An ordinary Ansible module (ansible-core
# runs it as it is) that sandball runs as a sandboxed component: make it yours.

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            content=dict(type="str", required=True),
        ),
        supports_check_mode=True,
    )
    path = module.params["path"]
    content = module.params["content"]
    try:
        with open(path) as f:
            before = f.read()
    except FileNotFoundError:
        before = ""
    changed = before != content
    result = dict(changed=changed, path=path)
    if changed and module._diff:
        result["diff"] = dict(before=before, after=content)
    if changed and not module.check_mode:
        with open(path, "w") as f:
            f.write(content)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
