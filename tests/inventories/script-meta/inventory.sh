#!/bin/sh
# An inventory script that gives every host's variables under _meta.hostvars.
if [ "$1" = "--list" ]; then
cat <<'JSON'
{
  "web": {"hosts": ["w1", "w2"], "vars": {"http_port": 80, "nested": {"a": [1, 2]}}, "children": ["api"]},
  "api": ["a1", "a2"],
  "db": {"hosts": ["d1"]},
  "solo": {"some_var": "legacy form: a host named like the group"},
  "all": {"vars": {"everyone": true}},
  "empty": {"hosts": []},
  "_meta": {"hostvars": {"w1": {"ansible_host": "10.0.0.1"}, "a2": {"x": null}}}
}
JSON
else
  echo '{}'
fi
