#!/usr/bin/env bash
# Per-task cost against inventory size: the same 10 hosts x 80 tasks (each templating
# the `groups` magic variable) in an inventory of 10 hosts and in one of 10,010 hosts.
# A task's cost must not grow with the inventory: the ratio printed should be near 1
# (the larger inventory's own loading aside).
#
# Environment: SANDBALL (default target/release/sandball), RUNS (best of; default 3).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SANDBALL=${SANDBALL:-target/release/sandball}
RUNS=${RUNS:-3}
if [ ! -x "$SANDBALL" ]; then
    echo "task_scale.sh: $SANDBALL not found; build it with: make bench" >&2
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sandball-task-scale.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
python3 - "$WORK" <<'PY'
import sys
work = sys.argv[1]
nodes = ["[nodes]"] + [f"n{i} ansible_connection=local" for i in range(10)]
others = ["[others]"] + [f"o{i}.example ansible_host=10.0.{i // 250}.{i % 250}" for i in range(10000)]
open(f"{work}/small.ini", "w").write("\n".join(nodes) + "\n")
open(f"{work}/big.ini", "w").write("\n".join(nodes + others) + "\n")
tasks = "".join("    - debug: {msg: '{{ groups.nodes | length }}'}\n" for _ in range(80))
open(f"{work}/play.yml", "w").write("- hosts: nodes\n  gather_facts: false\n  tasks:\n" + tasks)
PY

# Best wall time of RUNS runs, in seconds.
best() {
    local best="" t
    for _ in $(seq "$RUNS"); do
        t=$( { /usr/bin/env time -f %e "$SANDBALL" playbook -i "$1" "$WORK/play.yml" > /dev/null; } 2>&1 | tail -1 )
        if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    done
    echo "$best"
}

small=$(best "$WORK/small.ini")
big=$(best "$WORK/big.ini")
# What the large inventory costs to load and print alone, for scale.
load=$( { /usr/bin/env time -f %e "$SANDBALL" inventory -i "$WORK/big.ini" --list > /dev/null; } 2>&1 | tail -1 )
awk -v s="$small" -v b="$big" -v l="$load" 'BEGIN {
    printf "10 hosts x 80 tasks, 10-host inventory:     %6.3f s (%.3f ms per task-host)\n", s, s * 1000 / 800
    printf "10 hosts x 80 tasks, 10,010-host inventory: %6.3f s (%.3f ms per task-host)\n", b, b * 1000 / 800
    printf "sandball inventory --list of the large one: %6.3f s (loading it is part of the run)\n", l
    printf "ratio (large / small): %.2f\n", b / s
}'
