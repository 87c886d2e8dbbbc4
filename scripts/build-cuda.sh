#!/usr/bin/env bash
# build-cuda.sh — vet and build gokeras with the CUDA machine compiled in.
#
# The CUDA machine (device/cuda) is behind the build tag cudavm. (Not
# `cuda`: that tag also switches gorgonia.org/gorgonia to its own CUDA
# backend, which needs cuDNN and links cuBLAS; see device/cuda/doc.go.)
# The cgo flags come from PREFIX/env.sh, written by scripts/install-cuda.sh.
#
# Usage: scripts/build-cuda.sh [--bin DIR]
#   --bin DIR   also link the programs scripts/gpu-verify.sh runs into DIR
#               (train, placement, and cuda.test, the device/cuda tests),
#               and pack them into DIR/cuda-bin.tgz: that one file (about
#               26 MiB; the programs are 70) is what to copy to a GPU
#               machine, where scripts/gpu-verify.sh DIR unpacks it;
#               scripts/gpu-verify.sh --dry-run DIR checks it here. bin/ is
#               ignored by git
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${GOKERAS_CUDA_PREFIX:-$repo/.cuda}
bin=""
while [ $# -gt 0 ]; do
	case $1 in
	--bin)
		[ $# -ge 2 ] || { echo "build-cuda.sh: --bin needs a directory" >&2; exit 2; }
		bin=$2
		shift
		;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) echo "build-cuda.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

if [ ! -f "$prefix/env.sh" ]; then
	echo "build-cuda.sh: $prefix/env.sh is missing: run scripts/install-cuda.sh first" >&2
	exit 1
fi
# shellcheck source=/dev/null
. "$prefix/env.sh"
cd "$repo"
tags=cudavm

set -x
go vet -tags "$tags" ./...
go build -tags "$tags" ./...
{ set +x; } 2>/dev/null
[ -n "$bin" ] || exit 0
mkdir -p "$bin"
set -x
go build -tags "$tags" -trimpath -ldflags="-s -w" -o "$bin/train" ./cmd/train
go build -tags "$tags" -trimpath -ldflags="-s -w" -o "$bin/placement" ./examples/placement
go test -c -tags "$tags" -trimpath -ldflags="-s -w" -o "$bin/cuda.test" ./device/cuda
{ set +x; } 2>/dev/null
for f in train placement cuda.test; do
	echo "build-cuda.sh: $bin/$f: needs $(ldd "$bin/$f" 2>/dev/null | awk '/libcuda/ {print $1}') and glibc $(objdump -T "$bin/$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -Vu | awk 'END { sub("GLIBC_", ""); print }') or later" >&2
done
tar -C "$bin" -czf "$bin/cuda-bin.tgz.tmp" train placement cuda.test
mv "$bin/cuda-bin.tgz.tmp" "$bin/cuda-bin.tgz"
echo "build-cuda.sh: $bin/cuda-bin.tgz: $(du -h "$bin/cuda-bin.tgz" | cut -f1), the file to copy to a GPU machine (check it: scripts/gpu-verify.sh --dry-run $bin)" >&2
