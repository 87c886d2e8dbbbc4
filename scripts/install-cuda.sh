#!/usr/bin/env bash
# install-cuda.sh — fetch what `go build -tags cudavm` needs, from Debian.
#
# The CUDA machine (device/cuda) is built against the CUDA driver API through
# gorgonia.org/cu: the build needs cuda.h and a libcuda.so to link against,
# nothing else (cuBLAS is opened at run time, the kernels are PTX embedded
# in the binary). Both files are in Debian 12's nvidia-cuda-dev package
# (CUDA 11.8, component non-free). This script
#
#   1. adds the `contrib non-free` components to Debian's apt sources
#      (one-line /etc/apt/sources.list and deb822
#      /etc/apt/sources.list.d/debian.sources are both handled),
#   2. runs apt-get update when the package is not known yet,
#   3. downloads nvidia-cuda-dev with `apt-get download` (no dependencies are
#      installed) and unpacks only cuda.h and the libcuda.so link stub into a
#      repo-local prefix (default .cuda/, ignored by git),
#   4. writes PREFIX/env.sh with the cgo flags, and prints them.
#
# With --nvcc it also installs nvidia-cuda-toolkit system-wide with apt-get
# (several GB, with g++-11 as nvcc's host compiler): only needed to
# regenerate the committed PTX (go generate ./device/cuda/kernels), never in CI.
#
# It is idempotent: when the prefix is complete it only prints the flags.
#
# Usage: scripts/install-cuda.sh [--nvcc] [--prefix DIR] [--quiet]
#   --prefix DIR  where to unpack (default: REPO/.cuda, or $GOKERAS_CUDA_PREFIX)
#   --quiet       print only the two export lines
# Then: source .cuda/env.sh   (or use scripts/build-cuda.sh, which does)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${GOKERAS_CUDA_PREFIX:-$repo/.cuda}
want_nvcc=0
quiet=0
while [ $# -gt 0 ]; do
	case $1 in
	--nvcc) want_nvcc=1 ;;
	--prefix)
		[ $# -ge 2 ] || { echo "install-cuda.sh: --prefix needs a directory" >&2; exit 2; }
		prefix=$2
		shift
		;;
	--quiet) quiet=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) echo "install-cuda.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

say() { [ "$quiet" = 1 ] || echo "install-cuda.sh: $*" >&2; }
die() { echo "install-cuda.sh: error: $*" >&2; exit 1; }
workdir="" # the download folder, removed on exit
trap '[ -z "$workdir" ] || rm -rf "$workdir"' EXIT

# The package, and the files taken from it.
dev_pkg=nvidia-cuda-dev
multiarch=x86_64-linux-gnu
header=usr/include/cuda.h
stub=usr/lib/$multiarch/stubs/libcuda.so

# root runs apt directly; anyone else goes through sudo.
as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		die "'$*' needs root and sudo is not installed: run this script as root"
	fi
}

# enable_components adds contrib and non-free to every Debian source that has
# main, in /etc/apt/sources.list (one-line format) and in the deb822 files
# /etc/apt/sources.list.d/*.sources. A file is only rewritten (after a
# .gokeras-bak copy) when that changes it. It prints "changed" if it did.
enable_components() {
	local f changed=0 tmp
	# On the lines that list main: append contrib, then non-free, where missing.
	local add='{/[[:space:]]contrib([[:space:]]|$)/!s/[[:space:]]*$/ contrib/;/[[:space:]]non-free([[:space:]]|$)/!s/[[:space:]]*$/ non-free/}'
	local oneline='^[[:space:]]*deb(-src)?[[:space:]].*debian.*[[:space:]]main([[:space:]]|$)'
	local deb822='^Components:.*[[:space:]]main([[:space:]]|$)'
	tmp=$(mktemp)
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		case $f in
		*.sources)
			grep -Eiq '^URIs:.*debian' "$f" || continue
			sed -E "/$deb822/$add" "$f" >"$tmp"
			;;
		*) sed -E "/$oneline/$add" "$f" >"$tmp" ;;
		esac
		cmp -s "$f" "$tmp" && continue
		as_root cp "$f" "$f.gokeras-bak"
		as_root cp "$tmp" "$f"
		say "enabled contrib non-free in $f (backup: $f.gokeras-bak)"
		changed=1
	done
	rm -f "$tmp"
	[ "$changed" = 0 ] || echo changed
}

# candidate prints the version apt would fetch for a package, or nothing.
candidate() {
	apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2 }'
}

write_env() {
	cat >"$prefix/env.sh.tmp" <<EOF
# cgo flags for \`go build -tags cudavm\`, written by scripts/install-cuda.sh.
# cuda.h and the libcuda.so link stub from Debian's $dev_pkg $(cat "$prefix/VERSION").
# The stub only satisfies the linker: at run time the NVIDIA driver's
# libcuda.so.1 is used.
export CGO_ENABLED=1
export CGO_CFLAGS="-I$prefix/include"
export CGO_LDFLAGS="-L$prefix/lib/stubs"
EOF
	mv "$prefix/env.sh.tmp" "$prefix/env.sh"
}

install_dev() {
	if [ -f "$prefix/include/cuda.h" ] && [ -f "$prefix/lib/stubs/libcuda.so" ] && [ -f "$prefix/VERSION" ]; then
		say "cuda.h and the libcuda.so stub are already in $prefix ($dev_pkg $(cat "$prefix/VERSION"))"
		return
	fi
	command -v apt-get >/dev/null || die "apt-get not found: this script supports Debian 12 (bookworm); elsewhere install the CUDA toolkit and set CGO_CFLAGS=-I<cuda>/include CGO_LDFLAGS=-L<cuda>/lib64/stubs"
	local start=$SECONDS
	local changed
	changed=$(enable_components)
	if [ -n "$changed" ] || [ -z "$(candidate $dev_pkg)" ]; then
		say "apt-get update (contrib non-free enabled)"
		as_root apt-get update -qq >&2
	fi
	local version
	version=$(candidate $dev_pkg)
	[ -n "$version" ] || die "apt knows no $dev_pkg after enabling contrib non-free: is this Debian 12 (bookworm)?"

	workdir=$(mktemp -d)
	local tmp=$workdir
	say "downloading $dev_pkg $version (about 775 MB, only two files are kept)"
	# apt's download sandbox user cannot write to a private temp dir: download as the caller.
	(cd "$tmp" && apt-get -qq -o APT::Sandbox::User="$(id -un)" download "$dev_pkg=$version" >&2)
	local deb
	deb=$(ls "$tmp"/*.deb)
	say "unpacking cuda.h and stubs/libcuda.so from $(basename "$deb")"
	mkdir -p "$tmp/x"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" "./$header" "./$stub"
	rm -f "$deb"
	mkdir -p "$prefix/include" "$prefix/lib/stubs"
	mv "$tmp/x/$header" "$prefix/include/cuda.h"
	mv "$tmp/x/$stub" "$prefix/lib/stubs/libcuda.so"
	echo "$version" >"$prefix/VERSION.tmp" && mv "$prefix/VERSION.tmp" "$prefix/VERSION"
	say "done in $((SECONDS - start))s"
}

install_nvcc() {
	if command -v nvcc >/dev/null; then
		say "nvcc is installed: $(nvcc --version | tail -n 1)"
		return
	fi
	local start=$SECONDS
	enable_components >/dev/null
	[ -n "$(candidate nvidia-cuda-toolkit)" ] || as_root apt-get update -qq >&2
	say "installing nvidia-cuda-toolkit with apt-get (several GB)"
	# --no-install-recommends keeps the NVIDIA kernel driver (dkms) out.
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit >&2
	say "nvcc installed in $((SECONDS - start))s: $(nvcc --version | tail -n 1)"
}

install_dev
write_env
[ "$want_nvcc" = 0 ] || install_nvcc

if [ "$quiet" = 1 ]; then
	grep '^export CGO_[CL]' "$prefix/env.sh"
else
	say "cgo flags (also in $prefix/env.sh; source it, or run scripts/build-cuda.sh):"
	grep '^export' "$prefix/env.sh"
fi
