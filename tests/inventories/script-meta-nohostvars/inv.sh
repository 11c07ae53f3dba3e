#!/bin/sh
# _meta without hostvars: ansible asks --host for each host.
case "$1" in
  --list) echo '{"web": ["w1", "w2"], "db": {"hosts": ["d1"], "children": ["web"]}, "_meta": {}}' ;;
  --host) printf '{"asked": "%s"}\n' "$2" ;;
esac
