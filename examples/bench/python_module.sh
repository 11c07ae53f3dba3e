#!/usr/bin/env bash
# The cost of a Python module component (examples/modules/python/conf_line, built by
# `make example-python-module`), or with LANGUAGE=js of the same module in JavaScript
# (examples/modules/js, `make example-js-module`): its size, its first compile on a
# node (an empty shim cache), and a warm task, against ansible-core running the Python
# file as a legacy module (from the playbook's library/). A task's time is the difference between a
# playbook of TASKS+1 and one of 1 task of the module, divided by TASKS: the controller's
# and the tools' start-up are not in it.
#
# Environment: SANDBALL (default target/release/sandball; its shim is the one beside it
# unless SANDBALL_SHIM says otherwise), VENV (default target/venv), TASKS (default 20),
# SKIP_ANSIBLE=1, BENCH_SUMMARY (a file to add a row to), LANGUAGE (python, the
# default, or js).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

SANDBALL=${SANDBALL:-target/release/sandball}
VENV=${VENV:-target/venv}
TASKS=${TASKS:-20}
case "${LANGUAGE:-python}" in
    python) COMPONENTS=target/components/python LABEL=Python ;;
    js) COMPONENTS=target/components/js LABEL=JavaScript ;;
    *) echo "python_module.sh: LANGUAGE is python or js" >&2; exit 2 ;;
esac
COMPONENT=$COMPONENTS/conf_line.wasm
if [ ! -f "$COMPONENT" ]; then
    echo "python_module.sh: $COMPONENT not found; build it with: make example-${LANGUAGE:-python}-module" >&2
    exit 1
fi
if [ ! -x "$SANDBALL" ]; then
    echo "python_module.sh: $SANDBALL not found; build it with: make bench" >&2
    exit 1
fi
export SANDBALL_SHIM=${SANDBALL_SHIM:-$(cd "$(dirname "$SANDBALL")" && pwd)/sandball-shim}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sandball-pybench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export SANDBALL_CACHE_DIR="$WORK/shim-cache" NO_COLOR=1 ANSIBLE_NOCOLOR=1
mkdir -p "$WORK/legacy" "$WORK/files"
# Not library/ beside the playbooks: sandball would run it there as a legacy module.
cp examples/modules/python/conf_line.py "$WORK/legacy/"
printf '[[policy.rule]]\nmodules = ["conf_line"]\nmanifest = true\n' > "$WORK/sandball.toml"

# play N: N tasks setting the same line (the first adds it, the others find it there).
play() {
    {
        printf -- '- hosts: localhost\n  gather_facts: false\n  tasks:\n'
        for _ in $(seq "$1"); do
            printf '    - conf_line: {path: "%s/files/app.conf", key: port, value: "8080", create: true}\n' "$WORK"
        done
    } > "$WORK/play$1.yml"
    echo "$WORK/play$1.yml"
}
now() { python3 -c 'import time; print(time.monotonic())'; }
# seconds RUNNER PLAYBOOK: the wall time of one run.
seconds() {
    local start end
    rm -f "$WORK/files/app.conf"
    start=$(now)
    "$@" > "$WORK/out.txt" 2>&1 || { cat "$WORK/out.txt" >&2; exit 1; }
    end=$(now)
    python3 -c "print(round($end - $start, 3))"
}
ms() { python3 -c "print(round(($1 - $2) * 1000 / $TASKS, 1))"; }

one=$(play 1)
many=$(play $((TASKS + 1)))
ours() { "$SANDBALL" playbook -i localhost, -c local --policy "$WORK/sandball.toml" -M "$COMPONENTS" "$1"; }

size=$(stat -c %s "$COMPONENT")
cold=$(seconds ours "$one")
warm_one=$(seconds ours "$one")
warm_many=$(seconds ours "$many")
ours_task=$(ms "$warm_many" "$warm_one")
echo "$LABEL conf_line.wasm: $size bytes"
echo "sandball: first run (compile on an empty cache) ${cold} s, warm run of 1 task ${warm_one} s, ${ours_task} ms a warm task"

if [ -z "${SKIP_ANSIBLE:-}" ] && [ -x "$VENV/bin/ansible-playbook" ]; then
    theirs() { ANSIBLE_LIBRARY="$WORK/legacy" "$VENV/bin/ansible-playbook" -i localhost, -c local -e ansible_python_interpreter="$ROOT/$VENV/bin/python" "$1"; }
    their_one=$(seconds theirs "$one")
    their_many=$(seconds theirs "$many")
    their_task=$(ms "$their_many" "$their_one")
    echo "ansible-playbook (legacy module): run of 1 task ${their_one} s, ${their_task} ms a task"
    if [ -n "${BENCH_SUMMARY:-}" ]; then
        printf '| %s module component (conf_line, %s MB), a task | %s s (first compile) | %s ms | %s ms | — | %s× |\n' \
            "$LABEL" "$(python3 -c "print(round($size / 1e6, 1))")" "$cold" "$ours_task" "$their_task" \
            "$(python3 -c "print(round($their_task / max($ours_task, 0.1), 1))")" >> "$BENCH_SUMMARY"
    fi
fi
