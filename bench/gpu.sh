#!/usr/bin/env bash
# gpu.sh — gokeras vs PyTorch eager on a GPU machine, and on its CPU.
#
# Runs bench/compare.py with a train binary built elsewhere and the
# machine's own python3 and torch: nothing here needs Go or apt. Build the
# binaries on a machine with Go, copy bin/ and this checkout over, run:
#
#   scripts/build-cuda.sh --bin bin      # where Go is: bin/train with -tags cudavm
#   bench/gpu.sh                         # on the GPU machine, from the checkout
#
# Prints the machine (nvidia-smi), then compare.py's table: ms/step (median
# of the rounds' medians), s/epoch (x 1563 steps at batch 32), PyTorch/gokeras
# speed-up per device, and each framework's GPU-vs-CPU speed-up, under the
# header bench/record.sh writes (date, commit, command, CPU and flags,
# PyTorch's and numpy's versions). With $OUT set, the same text also goes to
# $OUT/gpu-bench.txt (complete when the script ends): copy it to
# bench/results/ to quote it.
#
# Usage: bench/gpu.sh [DIR]
#   DIR           the binaries (default bin): DIR/train is used
# Environment (defaults in brackets):
#   DEVICES       cuda, cpu, or both [cuda,cpu]; cpu alone needs no GPU
#   BATCH_SIZES   [32]   OPTIMIZERS [sgd,adam]   ROUNDS [3]   STEPS timed per run [100]
#   WARMUP        untimed steps per run [10]   PAUSE seconds before each run [1]
#   TF32=1        let PyTorch use TF32 (reported; gokeras stays FP32)
#   PYTHON        a python3 with torch [python3]
#   VERBOSE=1     every run's median on standard error
#   GOKERAS_CUBLAS  cuBLAS for gokeras; when unset, gokeras looks where
#                 scripts/lib/cublas.sh says (the loader's path, /usr/local/cuda*,
#                 python3's site-packages, where torch's came from), and this
#                 script prints the one it will try first
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/log.sh
. "$repo/scripts/lib/log.sh"
# shellcheck source=scripts/lib/driver.sh
. "$repo/scripts/lib/driver.sh"
# shellcheck source=scripts/lib/cublas.sh
. "$repo/scripts/lib/cublas.sh"
bin=${1:-bin}
case $bin in /*) ;; *) bin=$repo/$bin ;; esac
devices=${DEVICES:-cuda,cpu}
py=${PYTHON:-python3}

if [ ! -x "$bin/train" ]; then
	echo "gpu.sh: $bin/train is missing: build it where Go is, with scripts/build-cuda.sh --bin bin (GPU) or go build -o bin/train ./cmd/train (CPU only), and copy it here" >&2
	exit 2
fi
if ! "$py" -c 'import torch' 2>/dev/null; then
	echo "gpu.sh: $py cannot import torch: set PYTHON to a python3 that has it" >&2
	exit 2
fi

if [ -n "${OUT:-}" ]; then
	log_to "$OUT/gpu-bench.txt"
fi

# The header bench/record.sh writes: date, commit, command, CPU model and
# flags, Go (if any), PyTorch and numpy; nvidia-smi names the GPU below.
TORCH=1 PYTHON=$py bash "$repo/bench/record.sh" --header gpu -- env DEVICES="$devices" BATCH_SIZES="${BATCH_SIZES:-32}" \
	OPTIMIZERS="${OPTIMIZERS:-sgd,adam}" ROUNDS="${ROUNDS:-3}" STEPS="${STEPS:-100}" WARMUP="${WARMUP:-10}" PAUSE="${PAUSE:-1}" \
	${TF32:+TF32=1} bench/gpu.sh "$bin" || true
echo "=== gokeras vs PyTorch: bench/gpu.sh $bin (devices $devices)"
if [[ ,$devices, == *,cuda,* ]]; then
	if command -v nvidia-smi >/dev/null; then
		nvidia-smi --query-gpu=name,memory.total,compute_cap,driver_version,clocks.max.sm,power.limit --format=csv || true
	else
		echo "nvidia-smi not found"
	fi
	# In this shell: driver_find may add /usr/local/nvidia to LD_LIBRARY_PATH.
	if ! driver_find; then
		echo "gpu.sh: no usable NVIDIA driver (above): run with DEVICES=cpu, or on a machine with an NVIDIA GPU" >&2
		exit 1
	fi
	# The cuBLAS gokeras will try first, looked for as its loader does.
	# Its python3 search runs python3; pin the one $PYTHON has.
	if cublas_find && [ "$py" != python3 ] && [ "$CUBLAS_WHERE" = "$py's site-packages" ]; then
		export GOKERAS_CUBLAS=$CUBLAS_LIB
		echo "cuBLAS: GOKERAS_CUBLAS=$GOKERAS_CUBLAS (gokeras' own search runs python3, not $py)"
	fi
fi
echo

args=(--train "$bin/train" --python "$py" --devices "$devices"
	--batch-sizes "${BATCH_SIZES:-32}" --optimizers "${OPTIMIZERS:-sgd,adam}" --rounds "${ROUNDS:-3}" --steps "${STEPS:-100}"
	--warmup "${WARMUP:-10}" --pause "${PAUSE:-1}")
if [ -n "${TF32:-}" ]; then args+=(--tf32); fi
if [ -n "${VERBOSE:-}" ]; then args+=(--verbose); fi
"$py" "$repo/bench/compare.py" "${args[@]}"
