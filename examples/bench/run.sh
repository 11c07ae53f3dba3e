#!/usr/bin/env bash
# The benchmark: examples/bench/bench.yml (10 hosts x 80 tasks) under sandball and,
# when the reference venv exists (`make ansible`), under ansible-playbook, with the
# same inventory, playbook and forks. Prints wall times, time per task-host and the
# ratio ansible/sandball. Exits non-zero if either run fails.
#
# Run from anywhere; `make bench` builds the release binaries first.
# Environment: SANDBALL (default target/release/sandball), VENV (default target/venv),
# FORKS (default 10), BENCH_CONNECTION (local, the default, or ssh: every host is an
# alias of a loopback sshd started for the run, see sshd.sh; ansible-playbook then uses
# pipelining), HOSTS (ssh only; default 10), SKIP_ANSIBLE=1 (sandball only), LEGACY=1
# (sandball runs ansible-core's own Python ping/file/stat through Ansiballz instead of
# its components, with the venv's ansible-core and the same Python as ansible-playbook,
# which then uses pipelining), ROUNDS (default 20: rounds of the playbook's four tasks
# to run, the same for both tools; fewer for a quicker figure on a busy machine).
# Besides wall times it prints the warm run's peak resident memory (its largest
# process, the controller) and that per host; with BENCH_SUMMARY set it adds a row to
# that file (`make bench` prints them as one table).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

SANDBALL=${SANDBALL:-target/release/sandball}
VENV=${VENV:-target/venv}
FORKS=${FORKS:-10}
INVENTORY=examples/bench/inventory.ini
PLAYBOOK=examples/bench/bench.yml
BENCH_CONNECTION=${BENCH_CONNECTION:-local}
HOSTS=${HOSTS:-10}
ROUNDS=${ROUNDS:-20}
if ! [ "$ROUNDS" -ge 1 ] 2>/dev/null || [ "$ROUNDS" -gt 20 ]; then
    echo "run.sh: ROUNDS must be a number from 1 to 20, not '$ROUNDS'" >&2
    exit 1
fi
TASKS=$(( ROUNDS * 4 ))
if [ "$BENCH_CONNECTION" = local ]; then
    HOSTS=10
fi

if ! command -v python3 >/dev/null 2>&1; then
    echo "run.sh: python3 is needed (it provides the monotonic clock)" >&2
    exit 1
fi
if [ ! -x "$SANDBALL" ]; then
    echo "run.sh: $SANDBALL not found; build it with: make bench" >&2
    exit 1
fi
if [ ! -x target/release/sandball-shim ] && [ -z "${SANDBALL_SHIM:-}" ]; then
    echo "run.sh: target/release/sandball-shim not found; build it with: make bench" >&2
    exit 1
fi
export SANDBALL_SHIM=${SANDBALL_SHIM:-$ROOT/target/release/sandball-shim}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sandball-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# The shim's cache lives in the work dir: the first task pays for compiling the modules,
# as it would on a fresh node.
export SANDBALL_CACHE_DIR="$WORK/shim-cache"
export NO_COLOR=1 ANSIBLE_NOCOLOR=1
if [ "$ROUNDS" -lt 20 ]; then
    # The first ROUNDS rounds of the playbook (each starts with its "round NN: ping").
    awk -v last="$ROUNDS" '/name: "round [0-9]+: ping"/ { split($0, a, "round "); if (a[2] + 0 > last) exit } { print }' \
        "$PLAYBOOK" >"$WORK/bench.yml"
    PLAYBOOK="$WORK/bench.yml"
fi
if [ "$BENCH_CONNECTION" = ssh ]; then
    # shellcheck source=examples/bench/sshd.sh
    . "$ROOT/examples/bench/sshd.sh"
    export ANSIBLE_PIPELINING=True ANSIBLE_SSH_CONTROL_PATH_DIR="$WORK/cp"
fi

# Runs a command and writes its wall time in milliseconds, from the monotonic clock, to
# the file $1, and the peak resident memory of the command's largest process in KiB to
# $1.rss; returns the command's exit status. Only the command itself is timed.
TIMER='import resource, subprocess, sys, time
start = time.monotonic_ns()
rc = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write(str((time.monotonic_ns() - start) // 1000000))
with open(sys.argv[1] + ".rss", "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc)'
timed() {
    python3 -c "$TIMER" "$@"
}

# Fails (returns 1) when a run's PLAY RECAP shows a failed or unreachable host.
recap_clean() {
    if ! grep -q '^PLAY RECAP' "$1"; then
        echo "run.sh: no PLAY RECAP in $1" >&2
        return 1
    fi
    if grep -E '(failed|unreachable)=[1-9]' "$1" >/dev/null; then
        echo "run.sh: failures in the recap of $1:" >&2
        sed -n '/^PLAY RECAP/,$p' "$1" >&2
        return 1
    fi
}

# Runs one tool: $1 = label, rest = command. Sets LAST_MS and LAST_RSS (KiB); returns
# non-zero on failure.
timed_run() {
    label=$1
    shift
    log="$WORK/$label.log"
    mkdir -p "$WORK/$label-files"
    echo "== $label: $*"
    status=0
    timed "$WORK/$label.ms" "$@" -e "bench_dir=$WORK/$label-files" >"$log" 2>&1 || status=$?
    LAST_MS=$(cat "$WORK/$label.ms" 2>/dev/null || echo 0)
    LAST_RSS=$(cat "$WORK/$label.ms.rss" 2>/dev/null || echo 0)
    sed -n '/^PLAY RECAP/,$p' "$log"
    if [ "$status" -ne 0 ]; then
        echo "run.sh: $label exited with $status; the last lines of its output:" >&2
        tail -n 30 "$log" >&2
        return 1
    fi
    recap_clean "$log"
}

# "12345" ms -> "12.345 s"
seconds() {
    printf '%d.%03d s' $(( $1 / 1000 )) $(( $1 % 1000 ))
}

# Time per task-host in ms with three decimals.
per_task_host() {
    micros=$(( $1 * 1000 / (HOSTS * TASKS) ))
    printf '%d.%03d ms' $(( micros / 1000 )) $(( micros % 1000 ))
}

failed=0

# LEGACY=1: the legacy modules, with ansible-playbook's Python and ansible-core.
SANDBALL_EXTRA=()
if [ -n "${LEGACY:-}" ]; then
    export SANDBALL_ANSIBLE_PYTHON="$ROOT/$VENV/bin/python" ANSIBLE_PIPELINING=True
    # Payloads are unpacked on the node in the run's own remote_tmp: the first run is cold.
    SANDBALL_EXTRA=(-e sandball_legacy_modules=all -e "ansible_python_interpreter=$ROOT/$VENV/bin/python"
        -e "ansible_remote_tmp=$WORK/sandball-remote")
fi

# First on a cold node (empty shim cache: every module is compiled once), then again
# on the warm node, as every later run on the same node is.
sandball_ms=
if timed_run sandball "$SANDBALL" playbook -i "$INVENTORY" "$PLAYBOOK" -f "$FORKS" "${SANDBALL_EXTRA[@]}"; then
    sandball_ms=$LAST_MS
else
    failed=1
fi
warm_ms=
if timed_run sandball-warm "$SANDBALL" playbook -i "$INVENTORY" "$PLAYBOOK" -f "$FORKS" "${SANDBALL_EXTRA[@]}"; then
    warm_ms=$LAST_MS
    warm_rss=$LAST_RSS
else
    failed=1
fi

ansible_ms=
if [ -n "${SKIP_ANSIBLE:-}" ]; then
    echo "== ansible: skipped (SKIP_ANSIBLE)"
elif [ -x "$VENV/bin/ansible-playbook" ]; then
    PY="$ROOT/$VENV/bin/python"
    if ANSIBLE_PYTHON_INTERPRETER="$PY" ANSIBLE_HOST_KEY_CHECKING=False \
        ANSIBLE_LOCAL_TEMP="$WORK/ansible-local" ANSIBLE_REMOTE_TEMP="$WORK/ansible-remote" \
        ANSIBLE_RETRY_FILES_ENABLED=False \
        timed_run ansible "$VENV/bin/ansible-playbook" -i "$INVENTORY" "$PLAYBOOK" -f "$FORKS" \
            -e "ansible_python_interpreter=$PY"; then
        ansible_ms=$LAST_MS
    else
        failed=1
    fi
else
    echo "== ansible: $VENV/bin/ansible-playbook not found (make ansible); sandball only"
fi

echo
echo "Benchmark: $HOSTS hosts x $TASKS tasks, forks $FORKS, connection $BENCH_CONNECTION${LEGACY:+, legacy modules (Ansiballz) against ansible-playbook with pipelining}"
if [ -n "$sandball_ms" ]; then
    echo "  sandball (cold):  $(seconds "$sandball_ms") wall, $(per_task_host "$sandball_ms") per task-host"
fi
if [ -n "$warm_ms" ]; then
    echo "  sandball (warm):  $(seconds "$warm_ms") wall, $(per_task_host "$warm_ms") per task-host"
    # The controller's peak memory (the largest process of the run is sandball's).
    echo "  sandball (warm):  peak resident memory $(( warm_rss / 1024 )) MiB, $(( warm_rss / HOSTS )) KiB per host"
fi
if [ -n "$ansible_ms" ]; then
    echo "  ansible-playbook: $(seconds "$ansible_ms") wall, $(per_task_host "$ansible_ms") per task-host"
fi
# Ratio with two decimals, guarding against a zero sandball time: $1 label, $2 ms.
ratio() {
    denom=$(( $2 > 0 ? $2 : 1 ))
    r=$(( ansible_ms * 100 / denom ))
    printf '  ratio ansible/sandball (%s): %d.%02d\n' "$1" $(( r / 100 )) $(( r % 100 ))
}
if [ -n "$ansible_ms" ]; then
    [ -z "$sandball_ms" ] || ratio cold "$sandball_ms"
    [ -z "$warm_ms" ] || ratio warm "$warm_ms"
fi
# One row of `make bench`'s table (BENCH_SUMMARY names its file).
if [ -n "${BENCH_SUMMARY:-}" ]; then
    x() { # ansible / $1 with two decimals, or "-"
        if [ -n "$ansible_ms" ] && [ -n "$1" ]; then
            r=$(( ansible_ms * 100 / ($1 > 0 ? $1 : 1) ))
            printf '%d.%02dx' $(( r / 100 )) $(( r % 100 ))
        else
            printf -- '-'
        fi
    }
    s() { if [ -n "$1" ]; then seconds "$1"; else printf -- '-'; fi; }
    what="$BENCH_CONNECTION, $HOSTS hosts x $TASKS tasks${LEGACY:+, legacy modules}"
    printf '| %s | %s | %s | %s | %s | %s |\n' "$what" "$(s "$sandball_ms")" "$(s "$warm_ms")" \
        "$(s "$ansible_ms")" "$(x "$sandball_ms")" "$(x "$warm_ms")" >>"$BENCH_SUMMARY"
fi
exit "$failed"
