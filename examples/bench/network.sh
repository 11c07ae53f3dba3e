#!/usr/bin/env bash
# Over a network: sshd-backed nodes, each behind a proxy of its own (the test harness's
# `netproxy`, see proxies.sh) that adds RTT/2 of delay each way and limits each
# connection to MBIT Mbit/s each way, at every RTT in RTTS (ms, default "1 20 80") and
# every node count in NODES (default "10 50"); sandball and ansible-playbook (pipelining,
# ControlPersist) in the same run, with forks = nodes, each cold then warm:
#   - sandball cold: every node has an empty cache of its own (shim and modules sent,
#     modules compiled); warm: the same nodes again;
#   - ansible-playbook cold: fresh control sockets (every connection opened); warm: the
#     same run again while its ControlPersist connections are still open.
# The play: one `ping` (opening the sessions), then ROUNDS (default 2) rounds of ten
# modules (ping, file, copy, lineinfile, replace, blockinfile, stat, slurp, find,
# command) between two run_once `debug` tasks that read the controller's clock. It
# reports each run's wall time, the time per task-host of those rounds (the time
# between the two clocks / tasks: every node runs each task at once) in seconds and in
# round trips, and the bytes on the wire per node (from the proxies' counts); the
# ratios ansible/sandball go to BENCH_SUMMARY as rows of `make bench`'s table, and the
# goals of the network benchmark are checked against the figures (reported, not
# enforced). Exits non-zero if a run fails.
#
# Environment: SANDBALL (default target/release/sandball), SANDBALL_SHIM (default
# target/release/sandball-shim), NETPROXY (default target/release/netproxy), VENV
# (default target/venv), RTTS, NODES, MBIT (default 100), ROUNDS, SKIP_ANSIBLE=1
# (sandball only), BENCH_SUMMARY (a file to add rows to).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SANDBALL=${SANDBALL:-target/release/sandball}
export SANDBALL_SHIM=${SANDBALL_SHIM:-$ROOT/target/release/sandball-shim}
NETPROXY=${NETPROXY:-target/release/netproxy}
VENV=${VENV:-target/venv}
RTTS=${RTTS:-1 20 80}
NODES=${NODES:-10 50}
MBIT=${MBIT:-100}
ROUNDS=${ROUNDS:-2}
for bin in "$SANDBALL" "$SANDBALL_SHIM" "$NETPROXY"; do
    if [ ! -x "$bin" ]; then
        echo "network.sh: $bin not found; build it with: make bench" >&2
        exit 1
    fi
done
if [ -z "${SKIP_ANSIBLE:-}" ] && [ ! -x "$VENV/bin/ansible-playbook" ]; then
    echo "network.sh: $VENV/bin/ansible-playbook not found (make ansible), or set SKIP_ANSIBLE=1" >&2
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sandball-network.XXXXXX")
export NO_COLOR=1 ANSIBLE_NOCOLOR=1
# sshd.sh starts the server and stops it (and removes $WORK) when this script exits;
# proxies.sh puts each node behind a proxy of its own.
HOSTS=1
# shellcheck source=examples/bench/sshd.sh
. examples/bench/sshd.sh
# shellcheck source=examples/bench/proxies.sh
. examples/bench/proxies.sh
trap 'proxy_stop; kill $SSHD_PID 2>/dev/null; rm -rf "$WORK"' EXIT

TASKS=$(( ROUNDS * 10 ))
python3 - "$WORK/play.yml" "$ROUNDS" <<'PY'
import sys
out, rounds = sys.argv[1], int(sys.argv[2])
modules = [
    ("ping", "{}"),
    ("file", "{path: '{{ d }}', state: directory}"),
    ("copy", "{content: \"one\\n\", dest: '{{ d }}/a.txt'}"),
    ("lineinfile", "{path: '{{ d }}/a.txt', line: two}"),
    ("replace", "{path: '{{ d }}/a.txt', regexp: '^one$', replace: three}"),
    ("blockinfile", "{path: '{{ d }}/b.txt', create: true, block: x}"),
    ("stat", "{path: '{{ d }}/a.txt'}"),
    ("slurp", "{src: '{{ d }}/a.txt'}"),
    ("find", "{paths: '{{ d }}'}"),
    ("command", "/bin/true"),
]
clock = "debug: {msg: \"clock {{ lookup('pipe', 'date +%s%N') }}\"}"
play = ["- hosts: all", "  gather_facts: false", "  vars:",
        "    d: '{{ bench_dir }}/{{ inventory_hostname }}'", "  tasks:",
        "    - name: connect", "      ping:",
        "    - name: clock before", f"      {clock}", "      run_once: true"]
for r in range(1, rounds + 1):
    for name, args in modules:
        play += [f"    - name: 'round {r}: {name}'", f"      {name}: {args}"]
play += ["    - name: clock after", f"      {clock}", "      run_once: true"]
open(out, "w").write("\n".join(play) + "\n")
PY

TIMER='import subprocess, sys, time
start = time.monotonic_ns()
with open(sys.argv[1], "w") as out:
    rc = subprocess.call(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
print((time.monotonic_ns() - start) // 1000000, rc)'
# One run: $1 its label, $2 nodes, $3 RTT (ms), $4 what it is (e.g. "sandball cold"),
# the rest the command. Adds a line to $WORK/results: nodes, RTT, the tool, cold or
# warm, wall ms, ms between the two clocks; returns non-zero if the run failed.
failed=0
timed_run() {
    label=$1 nodes=$2 rtt=$3 what=$4
    shift 4
    echo "== $what, $nodes nodes, RTT $rtt ms: $*"
    read -r ms rc < <(timeout 1800 python3 -c "$TIMER" "$WORK/$label.log" "$@" \
        -f "$nodes" -e "bench_dir=$WORK/files/$label") || true
    ms=${ms:-0} rc=${rc:-124}
    sed -n '/^PLAY RECAP/,$p' "$WORK/$label.log" | sed -n '2,4p'
    if [ "$rc" -ne 0 ] || ! grep -q '^PLAY RECAP' "$WORK/$label.log" \
        || grep -qE '(failed|unreachable)=[1-9]' "$WORK/$label.log"; then
        echo "network.sh: $what ($nodes nodes, RTT $rtt ms) exited with $rc; the last lines of its output:" >&2
        tail -n 30 "$WORK/$label.log" >&2
        failed=1
        return 1
    fi
    clocks=$(sed -n 's/.*"msg": "clock \([0-9]*\)".*/\1/p' "$WORK/$label.log" | tr '\n' ' ')
    echo "$nodes $rtt $what $ms $clocks" >>"$WORK/results"
}

# The bytes of the proxies just stopped: $1 nodes, $2 RTT, $3 what, added to
# $WORK/bytes as nodes, RTT, the tool, cold or warm, bytes up and down per node.
record_bytes() {
    awk -v n="$1" -v r="$2" -v what="$3" '{ up += $3; down += $4 }
        END { printf "%s %s %s %d %d\n", n, r, what, up / n, down / n }' "$PROXY_STATS" >>"$WORK/bytes"
}

: >"$WORK/results"
: >"$WORK/bytes"
PY_ANSIBLE="$ROOT/$VENV/bin/python"
for nodes in $NODES; do
    for rtt in $RTTS; do
        shape=(delay_ms="$(python3 -c "print($rtt / 2)")" mbit="$MBIT")
        tag="n$nodes-rtt$rtt"
        # sandball: each node a cache of its own, empty for the cold run.
        PROXY_CACHES="$WORK/caches/$tag"
        proxy_start n "$nodes" "${shape[@]}"
        timed_run "$tag-sandball-cold" "$nodes" "$rtt" "sandball cold" \
            "$SANDBALL" playbook -i "$PROXY_INVENTORY" "$WORK/play.yml" || true
        proxy_stop
        record_bytes "$nodes" "$rtt" "sandball cold"
        proxy_start n "$nodes" "${shape[@]}"
        timed_run "$tag-sandball-warm" "$nodes" "$rtt" "sandball warm" \
            "$SANDBALL" playbook -i "$PROXY_INVENTORY" "$WORK/play.yml" || true
        proxy_stop
        record_bytes "$nodes" "$rtt" "sandball warm"
        PROXY_CACHES=
        if [ -z "${SKIP_ANSIBLE:-}" ]; then
            # ansible-playbook: fresh control sockets, then the same ones again (both runs
            # through the same proxies, so their bytes are counted together).
            proxy_start n "$nodes" "${shape[@]}"
            for phase in cold warm; do
                ANSIBLE_PIPELINING=True ANSIBLE_SSH_CONTROL_PATH_DIR="$WORK/cp/$tag" \
                    ANSIBLE_PYTHON_INTERPRETER="$PY_ANSIBLE" ANSIBLE_HOST_KEY_CHECKING=False \
                    ANSIBLE_LOCAL_TEMP="$WORK/ansible-local" ANSIBLE_REMOTE_TEMP="$WORK/ansible-remote" \
                    ANSIBLE_RETRY_FILES_ENABLED=False \
                    timed_run "$tag-ansible-$phase" "$nodes" "$rtt" "ansible $phase" \
                    "$VENV/bin/ansible-playbook" -i "$PROXY_INVENTORY" "$WORK/play.yml" \
                    -e "ansible_python_interpreter=$PY_ANSIBLE" || true
            done
            proxy_stop
            record_bytes "$nodes" "$rtt" "ansible both"
        fi
    done
done

python3 - "$WORK/results" "$WORK/bytes" "$TASKS" "$MBIT" "$(stat -c %s "$SANDBALL_SHIM")" "${BENCH_SUMMARY:-}" <<'PY'
import sys
results, byte_file, tasks, mbit, shim_size, summary = sys.argv[1:]
tasks = int(tasks)
runs = {}  # (nodes, rtt, tool, phase) -> (wall ms, ms per task-host)
for line in open(results):
    f = line.split()
    if len(f) < 7:
        continue  # a run without both clocks
    nodes, rtt, tool, phase, ms, t0, t1 = f[:7]
    runs[int(nodes), float(rtt), tool, phase] = (int(ms), (int(t1) - int(t0)) / 1e6 / tasks)
sent = {}
for line in open(byte_file):
    nodes, rtt, tool, phase, up, down = line.split()
    sent[int(nodes), float(rtt), tool, phase] = (int(up), int(down))
MB = 1e6
print(f"\nOver a network: {tasks} tasks (10 modules) after a connecting ping, "
      f"{mbit} Mbit/s each way per connection, no jitter, no cuts; forks = nodes")
print(f"(per task-host: the rounds' time / {tasks}, every node at once; "
      f"in round trips: that / RTT; shim sent: {int(shim_size) / MB:.1f} MB)")
head = f"{'nodes':>5} {'RTT':>5}  {'run':<14} {'wall':>9} {'per task-host':>14} {'round trips':>11}  {'sent per node (up/down)':>24}"
print(head)
configs = sorted({(n, r) for n, r, _, _ in runs} | {(n, r) for n, r, _, _ in sent})
rows = []
for n, r in configs:
    for tool, phase in [("sandball", "cold"), ("sandball", "warm"), ("ansible", "cold"), ("ansible", "warm")]:
        run = runs.get((n, r, tool, phase))
        b = sent.get((n, r, tool, phase)) or (sent.get((n, r, tool, "both")) if phase == "cold" else None)
        btext = "" if b is None else f"{b[0] / MB:.2f} / {b[1] / MB:.2f} MB" + (" (both runs)" if tool == "ansible" else "")
        if run is None:
            print(f"{n:>5} {r:>5g}  {tool + ' ' + phase:<14} {'failed':>9}")
            continue
        ms, per = run
        print(f"{n:>5} {r:>5g}  {tool + ' ' + phase:<14} {ms / 1000:>7.2f} s {per:>11.1f} ms {per / r:>11.2f}  {btext:>24}")
    ratio = {}
    for phase in ("cold", "warm"):
        s, a = runs.get((n, r, "sandball", phase)), runs.get((n, r, "ansible", phase))
        if s and a:
            ratio[phase] = (a[0] / max(s[0], 1), a[1] / max(s[1], 1e-3))
            print(f"{'':>12} ratio ansible/sandball {phase}: {ratio[phase][0]:.1f}x wall, {ratio[phase][1]:.1f}x per task-host")
    rows.append((n, r, ratio))
    if summary:
        def sec(tool, phase):
            run = runs.get((n, r, tool, phase))
            return f"{run[0] / 1000:.2f} s" if run else "-"
        def x(phase):
            return f"{ratio[phase][0]:.2f}x" if phase in ratio else "-"
        with open(summary, "a") as f:
            f.write(f"| network, {n} nodes, RTT {r:g} ms, {mbit} Mbit/s, {tasks} tasks | {sec('sandball', 'cold')} | "
                    f"{sec('sandball', 'warm')} | {sec('ansible', 'cold')} cold, {sec('ansible', 'warm')} warm | {x('cold')} | {x('warm')} |\n")

def verdict(ok):
    return "met" if ok else "NOT met"
print("\nGoals:")
for n, r in configs:
    warm = runs.get((n, r, "sandball", "warm"))
    if warm:
        print(f"  warm task-host <= 1 RTT + 2 ms ({n} nodes, RTT {r:g} ms): {warm[1]:.1f} ms "
              f"against {r + 2:g} ms: {verdict(warm[1] <= r + 2)}")
for n, r in configs:
    b = sent.get((n, r, "sandball", "cold"))
    if b:
        total = (b[0] + b[1]) / MB
        print(f"  cold node <= 5 MB on the wire ({n} nodes, RTT {r:g} ms): {total:.2f} MB: {verdict(total <= 5)}")
for n, r, ratio in rows:
    if r == 20 and ratio:
        for phase, goal in (("warm", 20), ("cold", 8)):
            if phase in ratio:
                print(f"  at 20 ms RTT, >= {goal}x {phase} ({n} nodes): {ratio[phase][0]:.1f}x: {verdict(ratio[phase][0] >= goal)}")
PY
exit "$failed"
