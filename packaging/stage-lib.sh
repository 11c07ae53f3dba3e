#!/bin/sh
# Stages sandball's library directory as an install has it (docs/INSTALL.md):
#   DEST/lib/sandball/modules/NAME.wasm                the built-in module components
#   DEST/lib/sandball/shims/ARCH-linux/sandball-shim   a shim per node architecture
# The modules are the components `make modules` built (one per binary of each crate in
# modules-wasm/). The shims are those of the build for PROFILE (target/'s directory name:
# debug, release): the static ones, target/ARCH-unknown-linux-musl/PROFILE/, and, for
# this machine's architecture when there is no static one, target/PROFILE/sandball-shim.
# The directory is staged beside DEST/lib/sandball and renamed into place, so an
# earlier install's modules never linger among the new ones.
# Usage: packaging/stage-lib.sh PROFILE DEST
set -eu
[ $# -eq 2 ] || { echo "usage: $0 PROFILE DEST" >&2; exit 2; }
profile=$1
dest=$2
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
wasm=$target/wasm32-wasip2/wasm
lib=$dest/lib/sandball
new=$dest/lib/.sandball.new
old=$dest/lib/.sandball.old

# `uname -m` names, folded as the controller folds a node's (x86_64, aarch64).
normal_arch() {
	case $1 in
	amd64 | x86_64) echo x86_64 ;;
	arm64 | aarch64) echo aarch64 ;;
	*) echo "$1" ;;
	esac
}

rm -rf "$new" "$old"
mkdir -p "$new/modules" "$new/shims"

modules=$(${CARGO:-cargo} metadata --no-deps --format-version 1 | ${PYTHON:-python3} -c '
import json, os, sys
root = os.path.realpath("modules-wasm")
for package in json.load(sys.stdin)["packages"]:
    if os.path.realpath(package["manifest_path"]).startswith(root + os.sep):
        for target in package["targets"]:
            if "bin" in target["kind"]:
                print(target["name"])
')
[ -n "$modules" ] || { echo "$0: no module crates found in modules-wasm/" >&2; exit 1; }
for name in $modules; do
	[ -f "$wasm/$name.wasm" ] || { echo "$0: $wasm/$name.wasm is missing: run make modules" >&2; exit 1; }
	install -m 0644 "$wasm/$name.wasm" "$new/modules/$name.wasm"
done

for shim in "$target"/*-unknown-linux-musl/"$profile"/sandball-shim; do
	[ -f "$shim" ] || continue
	triple=$(basename "$(dirname "$(dirname "$shim")")")
	arch=$(normal_arch "${triple%%-*}")
	install -D -m 0755 "$shim" "$new/shims/$arch-linux/sandball-shim"
done
arch=$(normal_arch "$(uname -m)")
if [ ! -f "$new/shims/$arch-linux/sandball-shim" ]; then
	shim=$target/$profile/sandball-shim
	[ -f "$shim" ] || { echo "$0: no shim for $arch-linux: $shim is missing" >&2; exit 1; }
	install -D -m 0755 "$shim" "$new/shims/$arch-linux/sandball-shim"
fi

if [ -e "$lib" ]; then mv "$lib" "$old"; fi
mv "$new" "$lib"
rm -rf "$old"
echo "staged $(ls "$lib/modules" | wc -l) modules and the shims for $(ls "$lib/shims" | tr '\n' ' ')in $lib"
