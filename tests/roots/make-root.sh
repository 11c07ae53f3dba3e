#!/bin/sh
# Builds one of the Debian system roots the foreign-node tests start an sshd in
# (tests/tests/foreign_nodes.rs), with Debian's debootstrap from the Debian mirror:
#
#   make-root.sh NAME DIR    makes DIR/NAME, then DIR/NAME.stamp
#
#   bullseye-amd64     Debian 11, x86_64: openssh-server, python3 (3.9) and sudo, and
#                      a user `node` who may sudo anything without a password
#   bullseye-arm64     Debian 11, aarch64 (`debootstrap --foreign`, its second stage
#                      run by qemu-user-static through binfmt_misc): openssh-server
#   bullseye-nopython  Debian 11, x86_64: openssh-server and nothing else, no Python
#
# Each is the minbase variant with only those packages. DIR/NAME.stamp holds this
# script's sha256 once the root is complete: a root whose stamp matches is left as it
# is, any other is made anew (in DIR/NAME.new, renamed into place when done; what
# debootstrap says goes to DIR/NAME.log). An aarch64 root needs qemu-aarch64
# registered with binfmt_misc whenever it runs, so that is checked (and done) every
# time, stamp or not. Run as root; `make test-roots` runs it for all three at once.
set -eu

name=$1
dir=$2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
stamp=$dir/$name.stamp
hash=$(sha256sum "$0" | cut -d' ' -f1)

# aarch64 executables run by qemu-aarch64-static, opened when registered (flag F), so
# that a chroot needs no qemu of its own.
binfmt() {
	[ "$(uname -m)" = aarch64 ] && return
	binfmt=/proc/sys/fs/binfmt_misc
	[ -e $binfmt/register ] || mount -t binfmt_misc binfmt_misc $binfmt
	[ -e $binfmt/qemu-aarch64 ] || grep -v '^#' /usr/lib/binfmt.d/qemu-aarch64.conf > $binfmt/register
}

case $name in
bullseye-arm64) binfmt ;;
bullseye-amd64 | bullseye-nopython) ;;
*) echo "$0: no root named $name" >&2; exit 2 ;;
esac

[ "$(cat "$stamp" 2>/dev/null)" = "$hash" ] && exit 0

root=$dir/$name
new=$root.new
mkdir -p "$dir"
rm -f "$stamp"
# --one-file-system: never into something mounted there (debootstrap mounts /proc and
# /sys in a root while it works; it does so below in a mount namespace of its own).
rm -rf --one-file-system "$new" "$root"

echo "making the test root $root (debootstrap's output: $root.log)"
start=$(date +%s)
# What the build prints goes to the log; its end is shown when the build fails.
exec 3>&1 >"$root.log" 2>&1
trap 'status=$?; [ $status = 0 ] || { echo "$0: making $root failed; the end of $root.log:"; tail -n 40 "$root.log"; } >&3' EXIT
# In a mount namespace of its own: what debootstrap mounts in the root goes with it.
in_ns() { unshare --mount --propagation private -- "$@"; }
case $name in
bullseye-amd64)
	in_ns debootstrap --variant=minbase --include=openssh-server,python3,sudo \
		bullseye "$new" "$mirror"
	chroot "$new" useradd --create-home --shell /bin/bash node
	# sshd (without PAM) refuses any key to an account whose password is locked (`!`).
	chroot "$new" usermod --password '*' node
	echo 'node ALL=(ALL) NOPASSWD: ALL' > "$new/etc/sudoers.d/node"
	chmod 0440 "$new/etc/sudoers.d/node"
	;;
bullseye-nopython)
	in_ns debootstrap --variant=minbase --include=openssh-server bullseye "$new" "$mirror"
	;;
bullseye-arm64)
	in_ns debootstrap --foreign --arch=arm64 --variant=minbase --include=openssh-server \
		bullseye "$new" "$mirror"
	in_ns chroot "$new" /debootstrap/debootstrap --second-stage
	;;
esac
# The node's own name, which its sshd's UTS namespace takes (Sshd::start_in), and that
# name resolved, as sudo wants it.
echo "$name" > "$new/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$name" > "$new/etc/hosts"
# What the tests need no more: the downloaded packages and lists.
chroot "$new" apt-get clean
rm -rf "$new"/var/lib/apt/lists/*
mv "$new" "$root"
echo "$hash" > "$stamp"
echo "made $root in $(($(date +%s) - start)) s ($(du -sh "$root" | cut -f1))" >&3
