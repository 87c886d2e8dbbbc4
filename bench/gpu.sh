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
# speed-up per device, and each framework's GPU-vs-CPU speed-up. With $OUT
# set, the same text also goes to $OUT/gpu-bench.txt.
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
#   GOKERAS_CUBLAS  cuBLAS for gokeras; when unset and the loader knows
#                 none, the one that came with torch is used
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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

if [[ ,$devices, == *,cuda,* ]]; then
	# gokeras opens cuBLAS at run time (libcublas.so.13, .12, .11); pip's
	# torch keeps its own outside the loader's path, so point at that one.
	if [ -z "${GOKERAS_CUBLAS:-}" ] && ! ldconfig -p 2>/dev/null | grep -Eq 'libcublas\.so\.1[123] '; then
		lib=$("$py" - <<'PY'
import glob, os, sys, torch
roots = [os.path.dirname(torch.__file__)]
try:
    import nvidia
    roots += list(nvidia.__path__)
except ImportError:
    pass
roots += [os.path.join(p, "nvidia") for p in sys.path if p]
found = sorted({f for r in roots for f in glob.glob(os.path.join(r, "**", "libcublas.so.1[123]"), recursive=True)})
print(found[-1] if found else "")
PY
)
		if [ -n "$lib" ]; then
			GOKERAS_CUBLAS=$lib
			LD_LIBRARY_PATH=${lib%/*}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} # its libcublasLt
			export GOKERAS_CUBLAS LD_LIBRARY_PATH
		fi
	fi
fi

if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	exec > >(tee "$OUT/gpu-bench.txt") 2>&1
fi

echo "=== gokeras vs PyTorch: bench/gpu.sh $bin (devices $devices)"
if [[ ,$devices, == *,cuda,* ]]; then
	if command -v nvidia-smi >/dev/null; then
		nvidia-smi --query-gpu=name,memory.total,compute_cap,driver_version,clocks.max.sm,power.limit --format=csv || true
	else
		echo "nvidia-smi not found"
	fi
	echo "cuBLAS for gokeras: ${GOKERAS_CUBLAS:-the first of libcublas.so.13, .so.12, .so.11 the loader finds}"
fi
echo

args=(--train "$bin/train" --python "$py" --devices "$devices"
	--batch-sizes "${BATCH_SIZES:-32}" --optimizers "${OPTIMIZERS:-sgd,adam}" --rounds "${ROUNDS:-3}" --steps "${STEPS:-100}"
	--warmup "${WARMUP:-10}" --pause "${PAUSE:-1}")
if [ -n "${TF32:-}" ]; then args+=(--tf32); fi
if [ -n "${VERBOSE:-}" ]; then args+=(--verbose); fi
"$py" "$repo/bench/compare.py" "${args[@]}"
