#!/usr/bin/env bash
# gpu-verify.sh — check the CUDA build on a machine with an NVIDIA GPU.
#
# Runs the programs scripts/build-cuda.sh --bin DIR linked (on any machine
# with Debian 12's cuda.h; they need the NVIDIA driver's libcuda.so.1, a
# cuBLAS of CUDA 11, 12 or 13 on the loader's path or in $GOKERAS_CUBLAS,
# and glibc 2.34 or later):
#
#   1. the device/cuda tests (cuda.test, run in device/cuda as go test
#      would): kernels against the CPU ops, Place/Copy round trips, the
#      out-of-memory error, 50 training steps against /CPU:0, Train's rules;
#   2. examples/placement on /GPU:0;
#   3. train --synthetic --epochs 1 on /GPU:0 and then on /CPU:0, with the
#      same seed, timing both;
#   4. train --model cnn (Keras' cifar10_cnn: convolutions, pooling,
#      dropout) for 200 steps on /GPU:0 and on /CPU:0, same seed, and its
#      --benchmark on /GPU:0.
#
# GOKERAS_REQUIRE_GPU=1 is set, so a machine where the driver sees no GPU
# fails instead of skipping. Logs go to standard output, and also to
# $OUT/gpu-verify.log when $OUT is set.
#
# Usage: scripts/gpu-verify.sh [DIR [PART...]]
#   DIR    the binaries (default bin)
#   PART   tests, placement, train, cnn: run only these (default: all
#          four, about 12 minutes with the CPU epoch of train; split them
#          across calls where a call has a time limit)
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-bin}
[ $# -gt 0 ] && shift
parts=" ${*:-tests placement train cnn} "
for p in $parts; do
	case $p in tests | placement | train | cnn) ;; *) echo "gpu-verify.sh: unknown part $p (tests, placement, train, cnn)" >&2; exit 2 ;; esac
done
want() { [[ $parts == *" $1 "* ]]; }
case $bin in /*) ;; *) bin=$repo/$bin ;; esac
for f in cuda.test placement train; do
	if [ ! -x "$bin/$f" ]; then
		echo "gpu-verify.sh: $bin/$f is missing: build the binaries with scripts/build-cuda.sh --bin $bin" >&2
		exit 2
	fi
done
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	exec > >(tee "$OUT/gpu-verify.log") 2>&1
fi
export GOKERAS_REQUIRE_GPU=1

failed=()
run() {
	local name=$1
	shift
	echo
	echo "=== $name: $*"
	local start=$SECONDS
	if "$@"; then
		echo "=== $name: ok ($((SECONDS - start))s)"
	else
		echo "=== $name: FAILED with status $? ($((SECONDS - start))s)"
		failed+=("$name")
	fi
}

echo "=== machine"
if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=name,memory.total,compute_cap,driver_version --format=csv || true
else
	echo "nvidia-smi not found"
fi
ls -l /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 2>/dev/null || true
echo "cuBLAS: ${GOKERAS_CUBLAS:-the first of libcublas.so.13, .so.12, .so.11 the loader finds}"

want tests && run "device/cuda tests" bash -c "cd '$repo/device/cuda' && '$bin/cuda.test' -test.v -test.timeout 9m"
want placement && run "examples/placement" "$bin/placement" --device=/GPU:0
if want train; then
	run "train on /GPU:0" "$bin/train" --device=/GPU:0 --epochs 1 --synthetic --seed 1 --verbose 2
	run "train on /CPU:0" "$bin/train" --device=/CPU:0 --epochs 1 --synthetic --seed 1 --verbose 2
fi
if want cnn; then
	run "train --model cnn on /GPU:0" "$bin/train" --model cnn --device=/GPU:0 --epochs 1 --steps-per-epoch 200 --synthetic --seed 1 --verbose 2
	run "train --model cnn on /CPU:0" "$bin/train" --model cnn --device=/CPU:0 --epochs 1 --steps-per-epoch 200 --synthetic --seed 1 --verbose 2
	run "train --model cnn --benchmark on /GPU:0" "$bin/train" --model cnn --device=/GPU:0 --benchmark --seed 1
fi

echo
if [ ${#failed[@]} -gt 0 ]; then
	echo "gpu-verify.sh: FAILED: ${failed[*]}"
	exit 1
fi
echo "gpu-verify.sh: all passed"
