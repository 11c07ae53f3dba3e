#!/usr/bin/env bash
# Inventory benchmark: `sandball inventory --list` against `ansible-inventory --list` on a
# generated INI inventory of 10,000 hosts in 100 groups (two inline variables per host,
# two `:vars` per group, every group under one parent, group_vars/all.yml beside it),
# then sandball alone on 1,000, 10,000 and 100,000 hosts to show how its time grows.
# Both outputs of the 10,000-host run are compared as parsed JSON first: a fast wrong
# answer does not count.
#
# Run from anywhere; `make bench` builds the release binary first.
# Environment: SANDBALL (default target/release/sandball), VENV (default target/venv),
# RUNS (timed runs per measurement, best kept; default 3).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

SANDBALL=${SANDBALL:-target/release/sandball}
VENV=${VENV:-target/venv}
RUNS=${RUNS:-3}

if [ ! -x "$SANDBALL" ]; then
    echo "inventory.sh: $SANDBALL not found; build it with: make bench" >&2
    exit 1
fi
if [ ! -x "$VENV/bin/ansible-inventory" ]; then
    echo "inventory.sh: $VENV/bin/ansible-inventory not found; run: make ansible" >&2
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sandball-inventory-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export ANSIBLE_CONFIG="$WORK/ansible.cfg" ANSIBLE_HOME="$WORK/ansible-home"
printf '[defaults]\n' > "$ANSIBLE_CONFIG"

# Writes DIR/hosts.ini with N hosts in 100 groups, and DIR/group_vars/all.yml.
generate() {
    python3 - "$1" "$2" <<'PY'
import os, sys
out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.join(out, "group_vars"), exist_ok=True)
groups = 100
with open(os.path.join(out, "hosts.ini"), "w") as f:
    for g in range(groups):
        f.write(f"[group{g:03d}]\n")
        for h in range(g, n, groups):
            f.write(f"host{h:06d}.example.com ansible_host=10.{h // 65536}.{h // 256 % 256}.{h % 256} rack={h % 40}\n")
        f.write(f"[group{g:03d}:vars]\nzone=zone{g % 7}\nweight={g}\n")
    f.write("[everything:children]\n")
    for g in range(groups):
        f.write(f"group{g:03d}\n")
    f.write("[all:vars]\nntp=ntp.example.com\n")
with open(os.path.join(out, "group_vars", "all.yml"), "w") as f:
    f.write("dns: [10.0.0.53, 10.0.0.54]\nowner: bench\n")
PY
}

# Best wall time in milliseconds of RUNS runs of a command (stdout to a file).
TIMER='import subprocess, sys, time
runs, out, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
best = None
for _ in range(runs):
    with open(out, "wb") as f:
        start = time.monotonic_ns()
        rc = subprocess.call(cmd, stdout=f)
        ms = (time.monotonic_ns() - start) // 1000000
    if rc != 0:
        sys.exit(f"{cmd[0]} exited {rc}")
    best = ms if best is None else min(best, ms)
print(best)'
best_ms() {
    python3 -c "$TIMER" "$@"
}

for n in 1000 10000 100000; do
    mkdir -p "$WORK/$n"
    generate "$WORK/$n" "$n"
done

echo "inventory --list, best of $RUNS runs, $(nproc) cores"
ANSIBLE_MS=$(best_ms "$RUNS" "$WORK/ansible.json" "$VENV/bin/ansible-inventory" -i "$WORK/10000/hosts.ini" --list)
SANDBALL_MS=$(best_ms "$RUNS" "$WORK/sandball.json" "$SANDBALL" inventory -i "$WORK/10000/hosts.ini" --list)
python3 - "$WORK/ansible.json" "$WORK/sandball.json" <<'PY'
import json, sys
def load(p):
    d = json.load(open(p))
    d["_meta"].pop("profile", None)
    return d
a, s = load(sys.argv[1]), load(sys.argv[2])
if a != s:
    sys.exit("inventory.sh: sandball's --list differs from ansible-inventory's on 10,000 hosts")
print(f"  outputs identical: {len(a['_meta']['hostvars'])} hosts, {len(a) - 1} groups")
PY
python3 - "$ANSIBLE_MS" "$SANDBALL_MS" "${BENCH_SUMMARY:-}" <<'PY'
import sys
a, s = int(sys.argv[1]), int(sys.argv[2])
print(f"  10,000 hosts: ansible-inventory {a / 1000:.2f} s, sandball {s / 1000:.3f} s, ratio {a / max(s, 1):.1f}x")
if sys.argv[3]:
    with open(sys.argv[3], "a") as f:
        f.write(f"| inventory --list, 10,000 hosts | - | {s / 1000:.3f} s | {a / 1000:.2f} s | - | {a / max(s, 1):.2f}x |\n")
PY
for n in 1000 10000 100000; do
    ms=$(best_ms "$RUNS" "$WORK/sandball-$n.json" "$SANDBALL" inventory -i "$WORK/$n/hosts.ini" --list)
    python3 -c "import sys; n, ms = int(sys.argv[1]), int(sys.argv[2]); print(f'  sandball {n:>7,} hosts: {ms / 1000:.3f} s ({ms * 1000 / n:.1f} us per host)')" "$n" "$ms"
done
