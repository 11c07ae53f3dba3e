#!/usr/bin/python
# A JSONARGS module: the assembler replaces the marker below with the arguments as
# JSON. A raw triple-quoted string holds any JSON text unchanged (JSON never has three
# quotes in a row, and backslashes stay as they are).
import json

ARGS = json.loads(r"""<<INCLUDE_ANSIBLE_MODULE_JSON_ARGS>>""")

words = ARGS.get("text", "").split()
print(json.dumps({
    "changed": False,
    "words": len(words),
    "check_mode": ARGS.get("_ansible_check_mode", False),
}))
