#!/usr/bin/env python3
"""Builds a Python module into a sandball module component.

    python3 guest-sdk/python/build.py --manifest manifest.json module.py -o name.wasm

The module is an ordinary Ansible module (``main()`` makes an ``AnsibleModule``).
componentize-py (on PATH, or ``--componentize-py``) bundles it with CPython and this
folder's ``sandball_module`` (which also answers ``ansible.module_utils.basic``),
against world ``component`` of ``guest-sdk/wit`` (``component-without-http`` when the
manifest asks for no network); ``sandball module pack`` (on PATH, or ``--sandball``)
then embeds the manifest in the component's ``sandball:manifest`` custom section. The
module validates its arguments against the same manifest, which the build also gives
it: pack a Python module with no other manifest than the one it was built with.
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

APP = '''"""The component's wasi:cli/run export (written by guest-sdk/python/build.py)."""
from wit_world import exports
from sandball_module import entry
import {module} as _module

MANIFEST = {manifest!r}


class Run(exports.Run):
    def run(self) -> None:
        entry.run(_module.main, MANIFEST)
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", required=True, help="the module's manifest.json")
    parser.add_argument("module", help="the module's Python file (defines main())")
    parser.add_argument("-o", "--output", required=True, help="the component to write")
    parser.add_argument("--componentize-py", default="componentize-py", dest="componentize")
    parser.add_argument("--sandball", default="sandball", help="the sandball command (it packs)")
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
        # componentize-py keeps every import of the world: wasi:http only for a module
        # whose manifest asks for the network.
        net = any(c.get("kind") == "net" for c in manifest.get("capabilities") or [])
        world = "component" if net else "component-without-http"
        cmd = [opts.componentize, "-d", WIT, "-w", world, "componentize",
               "-p", HERE, "-p", work, "app", "-o", bare]
        done = subprocess.run(cmd)
        if done.returncode != 0:
            sys.exit("componentize-py failed (exit code %d): %s" % (done.returncode, " ".join(cmd)))
        pack = [opts.sandball, "module", "pack", "--manifest", opts.manifest, bare, "-o", opts.output]
        done = subprocess.run(pack)
        if done.returncode != 0:
            sys.exit("sandball module pack failed (exit code %d): %s" % (done.returncode, " ".join(pack)))


if __name__ == "__main__":
    main()
