"""Write sandball modules in Python: an ``AnsibleModule`` for WebAssembly components.

A module written for Ansible (``from ansible.module_utils.basic import AnsibleModule``)
runs unchanged: this package provides that import inside the component. Arguments are
validated by the Rust SDK's own code, which the shim serves through the sandball host
interface (``sandball:host/arguments``), against the manifest embedded in the
component, so a Python module's argument handling is a Rust module's: types, aliases,
defaults, choices, dependencies, ``no_log`` masking, check-mode refusal, the internal
``_ansible_*`` arguments. Programs run through ``sandball:host/process``, file modes
through ``sandball:host/posix``; files are read and written with Python's own API,
inside what the grant opens.
"""

from sandball_module.basic import AnsibleModule, ModuleExit

__all__ = ["AnsibleModule", "ModuleExit"]
