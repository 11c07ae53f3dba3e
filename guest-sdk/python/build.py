#!/usr/bin/env python3
"""Builds a Python module into a sandball module component.

    python3 guest-sdk/python/build.py --manifest manifest.json module.py -o name.wasm

The module is an ordinary Ansible module (``main()`` makes an ``AnsibleModule``).
componentize-py (on PATH, or ``--componentize-py``) bundles it with CPython and this
folder's ``sandball_module`` (which also answers ``ansible.module_utils.basic``),
against world ``component`` of ``guest-sdk/wit``; the manifest is then embedded in the
component's ``sandball:manifest`` custom section.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WIT = os.path.join(os.path.dirname(HERE), "wit")
SECTION = b"sandball:manifest"

APP = '''"""The component's wasi:cli/run export (written by guest-sdk/python/build.py)."""
from wit_world import exports
from sandball_module import entry
import {module} as _module

MANIFEST = {manifest!r}


class Run(exports.Run):
    def run(self) -> None:
        entry.run(_module.main, MANIFEST)
'''


def leb128(n):
    """An unsigned LEB128 number, as wasm writes lengths."""
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def custom_section(name, data):
    """A wasm custom section (id 0) named ``name`` holding ``data``."""
    payload = leb128(len(name)) + name + data
    return b"\x00" + leb128(len(payload)) + payload


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", required=True, help="the module's manifest.json")
    parser.add_argument("module", help="the module's Python file (defines main())")
    parser.add_argument("-o", "--output", required=True, help="the component to write")
    parser.add_argument("--componentize-py", default="componentize-py", dest="componentize")
    opts = parser.parse_args()

    with open(opts.manifest, "rb") as f:
        manifest_bytes = f.read()
    try:
        manifest = json.loads(manifest_bytes)
    except ValueError as e:
        sys.exit("%s: not valid JSON: %s" % (opts.manifest, e))
    if not isinstance(manifest, dict) or not manifest.get("name"):
        sys.exit("%s: a manifest is a JSON object with a name" % opts.manifest)
    name = os.path.splitext(os.path.basename(opts.module))[0]
    if not name.isidentifier():
        sys.exit("%s: the file name must be a Python module name" % opts.module)

    with tempfile.TemporaryDirectory(prefix="sandball-py-") as work:
        shutil.copy(opts.module, os.path.join(work, name + ".py"))
        with open(os.path.join(work, "app.py"), "w") as f:
            f.write(APP.format(module=name, manifest=manifest_bytes.decode("utf-8")))
        bare = os.path.join(work, "bare.wasm")
        cmd = [opts.componentize, "-d", WIT, "-w", "component", "componentize",
               "-p", HERE, "-p", work, "app", "-o", bare]
        done = subprocess.run(cmd)
        if done.returncode != 0:
            sys.exit("componentize-py failed (exit code %d): %s" % (done.returncode, " ".join(cmd)))
        with open(bare, "rb") as f:
            component = f.read()
    tmp = opts.output + ".tmp"
    with open(tmp, "wb") as f:
        f.write(component + custom_section(SECTION, manifest_bytes))
    os.replace(tmp, opts.output)


if __name__ == "__main__":
    main()
