#!/bin/sh
# Prints the path of a Python 3.12 or later, the controller Python ansible-core 2.21
# needs (`make ansible-2.21`), finding one or building one:
#
#   python312.sh DIR    the first that runs of: python3.14, python3.13, python3.12 on
#                       PATH; pyenv's (${PYENV_ROOT:-~/.pyenv}/versions/3.1[2-9]*);
#                       DIR/bin/python3 built earlier; else CPython built into DIR
#                       from the source of Debian 13's python3.13 (Debian 12 has
#                       only 3.11), fetched with `apt-get source` from the Debian
#                       mirror ($DEBIAN_MIRROR), its build dependencies from Debian.
#
# A pyenv shim is tried like any other program: one for a version pyenv has not
# selected fails, and the next candidate is tried. The build is made once (DIR/.stamp
# holds this script's sha256) and takes a few minutes on two cores; what it says goes
# to DIR.log. Run as root for the build (it installs Debian packages).
set -eu

dir=$1
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
hash=$(sha256sum "$0" | cut -d' ' -f1)

# Whether $1 is a Python that runs and is 3.12 or later.
recent() {
	"$1" -c 'import sys, ssl, ensurepip; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1
}

for name in python3.14 python3.13 python3.12; do
	if path=$(command -v $name) && recent "$path"; then echo "$path"; exit 0; fi
done
for path in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3; do
	if [ -x "$path" ] && recent "$path"; then echo "$path"; exit 0; fi
done
if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$hash" ] && recent "$dir/bin/python3"; then
	echo "$dir/bin/python3"; exit 0
fi

echo "python312.sh: no Python 3.12 or later found; building CPython into $dir (log: $dir.log)" >&2
mkdir -p "$(dirname "$dir")"
{
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
		> "$work/sources.list"
	apt="-o Dir::Etc::SourceList=$work/sources.list -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists=$work/lists -o Dir::Cache=$work/cache"
	# shellcheck disable=SC2086
	apt-get $apt update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential libssl-dev \
		zlib1g-dev libffi-dev libbz2-dev liblzma-dev libsqlite3-dev
	# shellcheck disable=SC2086
	(cd "$work" && apt-get $apt source --download-only python3.13)
	mkdir "$work/src"
	tar -xf "$work"/python3.13_*.orig.tar.xz -C "$work/src" --strip-components=1
	rm -rf "$dir" && mkdir -p "$dir"
	(cd "$work/src" && ./configure --prefix="$dir" >/dev/null \
		&& make -j"$(nproc)" >/dev/null && make install >/dev/null)
	echo "$hash" > "$dir/.stamp"
} > "$dir.log" 2>&1 || { echo "python312.sh: the build failed; see $dir.log" >&2; exit 1; }
recent "$dir/bin/python3" || { echo "python312.sh: $dir/bin/python3 does not run" >&2; exit 1; }
echo "$dir/bin/python3"
