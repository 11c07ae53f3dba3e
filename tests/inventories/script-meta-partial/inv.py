#!/usr/bin/env python3
import json, sys
if sys.argv[1:] == ["--list"]:
    print(json.dumps({
        "all": {"vars": {"from_all": 1, "v": "all"}, "children": ["web"]},
        "web": {"hosts": ["w1", "w2"], "vars": {"v": "web", "n": None, "b": True}},
        "extra": {"hosts": ["w1", "x1"], "vars": {"v": "extra"}},
        "ungrouped": {"hosts": ["u1"]},
        "emptygroup": {},
        "listgroup": ["l1", "w2"],
        "_meta": {"hostvars": {"w1": {"v": "host", "list": [1, {"a": None}]}, "x1": {}}},
    }))
else:
    print(json.dumps({"never": "called"}))
