# shellcheck shell=bash
# Sourced by run.sh when BENCH_CONNECTION=ssh: starts OpenSSH's sshd on a free loopback
# port with fresh host and client keys under $WORK, records its host key in a
# known_hosts file, and writes $WORK/inventory.ini with $HOSTS aliases of it, so that
# sandball and ansible-playbook connect to the same server the same way.
# Needs: $WORK, $HOSTS; sets INVENTORY and stops sshd when the script exits.

if [ ! -x /usr/sbin/sshd ]; then
    echo "run.sh: /usr/sbin/sshd not found; install openssh-server (make sshd)" >&2
    exit 1
fi
mkdir -p "$WORK/ssh" /run/sshd 2>/dev/null || mkdir -p "$WORK/ssh"
for k in host_key client_key; do
    ssh-keygen -q -t ed25519 -N '' -C sandball-bench -f "$WORK/ssh/$k"
done
cp "$WORK/ssh/client_key.pub" "$WORK/ssh/authorized_keys"
SSH_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$WORK/ssh/sshd_config" <<CONF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $WORK/ssh/host_key
PidFile none
AuthorizedKeysFile $WORK/ssh/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
MaxStartups 1000
MaxSessions 100
LogLevel ERROR
CONF
/usr/sbin/sshd -D -e -f "$WORK/ssh/sshd_config" 2>"$WORK/sshd.log" &
SSHD_PID=$!
trap 'kill $SSHD_PID 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $SSH_PORT), 1)" 2>/dev/null && break
    sleep 0.1
done
echo "[127.0.0.1]:$SSH_PORT $(cut -d' ' -f1,2 "$WORK/ssh/host_key.pub")" >"$WORK/ssh/known_hosts"

INVENTORY="$WORK/inventory.ini"
{
    echo "[bench]"
    echo "bench[001:$(printf '%03d' "$HOSTS")]"
    echo "[bench:vars]"
    echo "ansible_host=127.0.0.1"
    echo "ansible_port=$SSH_PORT"
    echo "ansible_user=$(id -un)"
    echo "ansible_ssh_private_key_file=$WORK/ssh/client_key"
    echo "ansible_ssh_common_args='-o UserKnownHostsFile=$WORK/ssh/known_hosts'"
    echo "sandball_cache_dir=$WORK/node-cache"
} >"$INVENTORY"
