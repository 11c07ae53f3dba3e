#!/usr/bin/env bash
# Load under faults: HOSTS (default 200) sshd-backed hosts on loopback, each through a
# proxy of its own (the test harness's `netproxy`), x TASKS (default 50) tasks with
# forks FORKS (default 50), while the proxies cut CUT_SHARE (default 0.05) of their
# connections at random moments of the run. Every run must complete; each host's recap
# must match what happened to it (a host whose connections were never cut is ok on
# every task; only a host with a cut may be unreachable, and then it is unreachable
# once and stops there, never failed); and it reports the controller's peak memory per
# host. sandball alone (ansible-playbook's retries over cuts are not the point here).
#
# Environment: SANDBALL (default target/release/sandball), SANDBALL_SHIM (default
# target/release/sandball-shim), NETPROXY (default target/release/netproxy), HOSTS,
# TASKS, FORKS, CUT_SHARE, CUT_WITHIN_MS (default 20000: the window after a connection
# opens in which its cut falls), BENCH_SUMMARY (a file to add a row to).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SANDBALL=${SANDBALL:-target/release/sandball}
export SANDBALL_SHIM=${SANDBALL_SHIM:-$ROOT/target/release/sandball-shim}
NETPROXY=${NETPROXY:-target/release/netproxy}
HOSTS=${HOSTS:-200}
TASKS=${TASKS:-50}
FORKS=${FORKS:-50}
CUT_SHARE=${CUT_SHARE:-0.05}
CUT_WITHIN_MS=${CUT_WITHIN_MS:-20000}
for bin in "$SANDBALL" "$SANDBALL_SHIM" "$NETPROXY"; do
    if [ ! -x "$bin" ]; then
        echo "under_faults.sh: $bin not found; build it with: make bench" >&2
        exit 1
    fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sandball-faults.XXXXXX")
export NO_COLOR=1 ANSIBLE_NOCOLOR=1
# sshd.sh starts the server (writing $WORK/inventory.ini with aliases of it) and stops
# it (and removes $WORK) when this script exits; proxies.sh puts each host behind a
# proxy of its own.
# shellcheck source=examples/bench/sshd.sh
. examples/bench/sshd.sh
# shellcheck source=examples/bench/proxies.sh
. examples/bench/proxies.sh
trap 'proxy_stop; kill $SSHD_PID 2>/dev/null; rm -rf "$WORK"' EXIT

# Each host through its own proxy; connections retried as ansible_ssh_retries says.
PROXY_VARS=ansible_ssh_retries=3
proxy_start f "$HOSTS" cut_share="$CUT_SHARE" cut_within_ms="$CUT_WITHIN_MS"
python3 - "$WORK" "$TASKS" <<'PY'
import sys
work, tasks = sys.argv[1], int(sys.argv[2])
kinds = ["ping:", "command: /bin/true", "file: {path: '{{ work }}/{{ inventory_hostname }}', state: touch}",
         "stat: {path: '{{ work }}'}", "debug: {msg: '{{ inventory_hostname }}'}"]
play = ["- hosts: all", "  gather_facts: false", "  tasks:"]
for t in range(tasks):
    play += [f"    - name: task {t + 1}", f"      {kinds[t % len(kinds)]}"]
open(f"{work}/play.yml", "w").write("\n".join(play) + "\n")
PY
mkdir -p "$WORK/files"

TIMER='import resource, subprocess, sys, time
start = time.monotonic_ns()
with open(sys.argv[1], "w") as out:
    rc = subprocess.call(sys.argv[2:], stdout=out)
print((time.monotonic_ns() - start) // 1000000, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)'
echo "== under faults: $HOSTS hosts x $TASKS tasks over ssh, forks $FORKS, $CUT_SHARE of connections cut"
read -r ms rss rc < <(timeout 900 python3 -c "$TIMER" "$WORK/out.txt" "$SANDBALL" playbook \
    -i "$PROXY_INVENTORY" "$WORK/play.yml" -f "$FORKS" -e "work=$WORK/files")
proxy_stop
python3 - "$WORK" "$HOSTS" "$TASKS" "$ms" "$rss" "$rc" "${BENCH_SUMMARY:-}" "$PROXY_PORTS" "$PROXY_STATS" <<'PY'
import re, sys
work, hosts, tasks, ms, rss, rc, summary = sys.argv[1], *map(int, sys.argv[2:7]), sys.argv[7]
ports = open(sys.argv[8]).read().split()
cuts = {l.split()[0]: l.split()[1] for l in open(sys.argv[9]) if re.fullmatch(r"\d+ \d+ \d+ \d+\n?", l)}
out = open(f"{work}/out.txt").read()
recap = {m[1]: {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m[2])}
         for m in re.finditer(r"^(f\d{3})\s+:\s+(.*)$", out, re.M)}
wrong = []
if rc not in (0, 4):
    wrong.append(f"exit code {rc}")
cut_hosts = 0
for i in range(hosts):
    h, cut = f"f{i:03d}", int(cuts.get(ports[i], "0"))
    cut_hosts += cut > 0
    r = recap.get(h)
    if r is None:
        wrong.append(f"{h}: no recap line")
    elif r["failed"] or r["skipped"]:
        wrong.append(f"{h}: {r}")
    elif cut == 0 and r["ok"] != tasks:
        wrong.append(f"{h}: never cut, yet {r}")
    elif r["unreachable"] and (cut == 0 or r["unreachable"] != 1 or r["ok"] >= tasks):
        wrong.append(f"{h}: unreachable without a cut to explain it: {r}")
unreachable = sum(1 for r in recap.values() if r["unreachable"])
per_task_host = ms * 1000 / (hosts * tasks)
print(f"  sandball: {ms / 1000:.1f} s ({per_task_host:.0f} us per task-host), exit {rc}; "
      f"{cut_hosts} hosts had a connection cut, {unreachable} ended unreachable; "
      f"peak memory {rss // 1024} MiB, {rss * 1024 // hosts // 1024} KiB per host")
if wrong:
    print("under_faults.sh: the recap does not match what happened:\n  " + "\n  ".join(wrong[:20]), file=sys.stderr)
    # What the run said of those hosts (the work directory goes when the script ends).
    named = {w.split(":")[0] for w in wrong[:20]}
    said = [l for l in out.splitlines()
            if any(f"[{h}]" in l for h in named) and not l.startswith(("ok:", "changed:"))]
    print("  what the run said of them:\n  " + "\n  ".join(said[:40]), file=sys.stderr)
    sys.exit(1)
if summary:
    with open(summary, "a") as f:
        f.write(f"| under faults, {hosts} hosts x {tasks} tasks, {cut_hosts} cut | {ms / 1000:.1f} s | | | recap matches | |\n")
PY
