#!/usr/bin/env bash
# The controller's cost against the number of hosts a play runs on: 200, 2,000 and
# 20,000 hosts (local connection) x 5 tasks that run on the controller alone
# (`set_fact`, `debug`, `assert`, a `debug` skipped by its verbosity, and `debug` of
# another host's `hostvars`), so that the figure is the executor's own work per
# task-host: variables, templating, conditions, results, callbacks. Its time per
# task-host and its peak memory per host must stay flat as the hosts grow (a cost that
# grows with the play's size shows as a rising figure). ansible-playbook runs the
# first (smallest) play in the same run, for the ratio.
#
# Environment: SANDBALL (default target/release/sandball), VENV (default target/venv),
# SIZES (default "200 2000 20000"), FORKS (default 50), SKIP_ANSIBLE=1,
# BENCH_SUMMARY (a file `make bench` collects one table row per benchmark in).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SANDBALL=${SANDBALL:-target/release/sandball}
VENV=${VENV:-target/venv}
SIZES=${SIZES:-200 2000 20000}
FORKS=${FORKS:-50}
if [ ! -x "$SANDBALL" ]; then
    echo "many_hosts.sh: $SANDBALL not found; build it with: make bench" >&2
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sandball-many-hosts.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export NO_COLOR=1 ANSIBLE_NOCOLOR=1
python3 - "$WORK" $SIZES <<'PY'
import sys
work, sizes = sys.argv[1], [int(n) for n in sys.argv[2:]]
for n in sizes:
    lines = ["[all:vars]", "ansible_connection=local", "[web]"]
    lines += [f"h{i:06d} idx={i}" for i in range(n)]
    open(f"{work}/hosts-{n}.ini", "w").write("\n".join(lines) + "\n")
open(f"{work}/play.yml", "w").write("""- hosts: all
  gather_facts: false
  tasks:
    - set_fact: {double: "{{ idx | int * 2 }}"}
    - debug: {msg: "{{ inventory_hostname }} {{ double }}"}
    - assert: {that: "double | int == idx | int * 2", quiet: true}
    - debug: {var: double, verbosity: 1}
    - debug: {msg: "{{ hostvars[ansible_play_hosts[0]].double }}"}
""")
PY
TASKS=5

# Runs a command; prints its wall time in ms and its peak resident memory in KiB.
TIMER='import resource, subprocess, sys, time
start = time.monotonic_ns()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
ms = (time.monotonic_ns() - start) // 1000000
print(ms, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)'

echo "== many hosts: $TASKS controller tasks, forks $FORKS"
first_n= first_ms= first_rss=
for n in $SIZES; do
    read -r ms rss < <(python3 -c "$TIMER" "$SANDBALL" playbook -i "$WORK/hosts-$n.ini" "$WORK/play.yml" -f "$FORKS") || {
        echo "many_hosts.sh: sandball failed on $n hosts" >&2
        exit 1
    }
    if [ -z "$first_n" ]; then first_n=$n first_ms=$ms first_rss=$rss; fi
    # Memory per host: what the peak grew by since the smallest play, per added host.
    python3 -c "import sys; n, ms, rss, t, n0, r0 = map(int, sys.argv[1:]); per = f', {(rss - r0) * 1024 // (n - n0)} bytes more per added host' if n > n0 else ''; print(f'  sandball {n:>6,} hosts: {ms / 1000:.3f} s, {ms * 1000 / (n * t):.1f} us per task-host, peak memory {rss // 1024} MiB{per}')" "$n" "$ms" "$rss" "$TASKS" "$first_n" "$first_rss"
done

if [ "${SKIP_ANSIBLE:-}" = 1 ] || [ ! -x "$VENV/bin/ansible-playbook" ]; then
    echo "  ansible-playbook: skipped"
    exit 0
fi
read -r ams _ < <(python3 -c "$TIMER" "$VENV/bin/ansible-playbook" -i "$WORK/hosts-$first_n.ini" "$WORK/play.yml" -f "$FORKS") || {
    echo "many_hosts.sh: ansible-playbook failed on $first_n hosts" >&2
    exit 1
}
python3 - "$first_n" "$first_ms" "$ams" "${BENCH_SUMMARY:-}" <<'PY'
import sys
n, s, a, summary = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print(f"  ansible-playbook {n:,} hosts: {a / 1000:.2f} s, ratio {a / max(s, 1):.1f}x")
if summary:
    with open(summary, "a") as f:
        f.write(f"| {n:,} local hosts x 5 controller tasks | - | {s / 1000:.3f} s | {a / 1000:.2f} s | - | {a / max(s, 1):.2f}x |\n")
PY
