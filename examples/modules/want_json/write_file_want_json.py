#!/usr/bin/python
# A WANT_JSON module in plain Python (no ansible imports): its arguments arrive as a
# JSON file whose path is the only argument. It writes `content` to `dest` when the
# file differs, honouring check mode.
import json
import os
import sys


def main():
    with open(sys.argv[1]) as f:
        args = json.load(f)
    dest = args.get("dest")
    content = args.get("content", "")
    if not dest:
        print(json.dumps({"failed": True, "msg": "missing required argument: dest"}))
        sys.exit(1)
    current = None
    if os.path.exists(dest):
        with open(dest) as f:
            current = f.read()
    changed = current != content
    if changed and not args.get("_ansible_check_mode"):
        tmp = dest + ".tmp"
        with open(tmp, "w") as f:
            f.write(content)
        os.rename(tmp, dest)
    print(json.dumps({"changed": changed, "dest": dest, "size": len(content)}))


if __name__ == "__main__":
    main()
