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
#               (train, placement, cuda.test)
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
