# shellcheck shell=bash
# Sourced after sshd.sh by the benchmarks that put a network between the controller
# and the nodes (under_faults.sh, network.sh): each node is the loopback sshd reached
# through a proxy of its own, the test harness's `netproxy` ($NETPROXY).
#
# proxy_start PREFIX COUNT [netproxy option…] starts COUNT proxies to the sshd with
# the options given (delay_ms=, jitter_ms=, mbit=, cut_share=, cut_within_ms=), and
# writes the inventory $PROXY_INVENTORY: hosts PREFIX000, PREFIX001… each through its
# own proxy, with sshd.sh's connection variables and the lines of $PROXY_VARS (one
# variable a line) for the group; with PROXY_CACHES set, each host has a node cache of
# its own under that directory (a node of its own, as a separate machine would be). It
# adds the server's key under every proxy's port to known_hosts. $PROXY_PORTS then
# holds the ports, one a line, in the hosts' order.
# proxy_stop stops them: $PROXY_STATS then holds a line per proxy, `PORT CUTS UP DOWN`
# (connections its random cuts cut; bytes it carried to the server and from it).
# One set of proxies runs at a time; the script's EXIT trap should call proxy_stop.
# Needs: $WORK, $SSH_PORT, $NETPROXY.

PROXY_PID=
PROXY_INVENTORY="$WORK/proxied.ini"
PROXY_PORTS="$WORK/proxy-ports"
PROXY_STATS="$WORK/proxy-stats"
PROXY_VARS=${PROXY_VARS:-}
PROXY_CACHES=${PROXY_CACHES:-}
SSHD_INVENTORY="$WORK/inventory.ini"

proxy_start() {
    prefix=$1
    count=$2
    shift 2
    rm -f "$WORK/proxy-in" "$PROXY_STATS"
    # Started with a pipe on their standard input, which closing stops them.
    mkfifo "$WORK/proxy-in"
    "$NETPROXY" "$SSH_PORT" "$count" "$@" <"$WORK/proxy-in" >"$PROXY_PORTS" 2>"$PROXY_STATS" &
    PROXY_PID=$!
    exec 9>"$WORK/proxy-in"
    for _ in $(seq 100); do
        [ "$(wc -l <"$PROXY_PORTS")" -ge "$count" ] && break
        sleep 0.1
    done
    if [ "$(wc -l <"$PROXY_PORTS")" -lt "$count" ]; then
        echo "proxies.sh: netproxy did not start $count proxies:" >&2
        cat "$PROXY_STATS" >&2
        return 1
    fi
    python3 - "$WORK" "$prefix" "$count" "$PROXY_PORTS" "$SSHD_INVENTORY" "$PROXY_INVENTORY" \
        "$PROXY_VARS" "$PROXY_CACHES" <<'PY'
import sys
work, prefix, count, ports, sshd_inv, out, extra, caches = sys.argv[1:]
ports = open(ports).read().split()
common = [l for l in open(sshd_inv).read().splitlines()
          if l.startswith(("ansible_", "sandball_")) and not l.startswith("ansible_port=")]
if caches:
    common = [l for l in common if not l.startswith("sandball_cache_dir=")]
hosts = []
for i in range(int(count)):
    host = f"{prefix}{i:03d}"
    cache = f" sandball_cache_dir={caches}/{host}" if caches else ""
    hosts.append(f"{host} ansible_port={ports[i]}{cache}")
lines = ["[bench]"] + hosts + ["[bench:vars]"] + common + [l for l in extra.splitlines() if l]
open(out, "w").write("\n".join(lines) + "\n")
# The server's key under each proxy's port too.
key = open(f"{work}/ssh/known_hosts").readline().split(None, 1)[1]
with open(f"{work}/ssh/known_hosts", "a") as kh:
    kh.writelines(f"[127.0.0.1]:{p} {key}" for p in ports)
PY
}

proxy_stop() {
    if [ -n "$PROXY_PID" ]; then
        exec 9>&-
        wait "$PROXY_PID" 2>/dev/null || true
        PROXY_PID=
    fi
}
