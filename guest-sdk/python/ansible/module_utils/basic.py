"""``from ansible.module_utils.basic import AnsibleModule`` inside a sandball component:
the same names, from ``sandball_module``, so a module written for Ansible needs no
change to its imports."""

from sandball_module.basic import AnsibleModule

__all__ = ["AnsibleModule"]
