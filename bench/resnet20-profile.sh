#!/bin/sh
# Where a gokeras ResNet-20 training step spends its CPU time: builds
# cmd/train, samples `train --model resnet20 --synthetic --benchmark` with
# Linux perf (the Go functions by name; train has no --cpuprofile flag), and
# prints the functions above 0.2% of the samples, then their sums by kind:
# the convolutions' products without patches (the conv kernels) and their
# kernel gradients (the cols kernels), other matrix products,
# BatchNormalization (its kernels and ops.normalize), patches (im2col and
# its gradient, where a convolution still has them),
# the merges (Add) and activations, the kernel (page faults: mostly the
# first step's first touch of its buffers) and the rest.
#
#   bench/record.sh resnet20-profile -- bench/resnet20-profile.sh       # batch 32
#   BATCH=128 STEPS=8 bench/resnet20-profile.sh
#
# Needs perf (Debian: linux-perf) and kernel.perf_event_paranoid <= 2.
set -eu
cd "$(dirname "$0")/.."
BATCH=${BATCH:-32} STEPS=${STEPS:-20}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/train" ./cmd/train
echo "\$ perf record -F 499 -g train --model resnet20 --synthetic --benchmark --batch-size $BATCH --benchmark-steps $STEPS --benchmark-warmup 2 --device=/CPU:0"
perf record -q -F 499 -g -o "$dir/perf.data" "$dir/train" --model resnet20 --synthetic --benchmark --batch-size "$BATCH" \
	--benchmark-steps "$STEPS" --benchmark-warmup 2 --device=/CPU:0 --seed 1 2>&1
perf report -i "$dir/perf.data" --no-children --sort symbol --stdio -g none --percent-limit 0.2 2>/dev/null |
	grep '%' | grep -v '^#' | sed 's/ *$//' >"$dir/top"
echo
echo "functions by share of the samples (self time, above 0.2%):"
cat "$dir/top"
perf report -i "$dir/perf.data" --no-children --sort symbol --stdio -g none 2>/dev/null | grep '%' | grep -v '^#' |
	awk '{
		p = $1; sub(/%/, "", p); s = $0
		if (s ~ /\[k\]/) k = "kernel (page faults, scheduling)"
		else if (s ~ /maskPositive|Activation|relu|ReLU/) k = "activations (ReLU)"
		else if (s ~ /column(Sums|Squares|GradSums|GammaGrad)|normGradRows|scaleShiftRows|ops\.normalize|ops\.layerNorm/) k = "BatchNormalization (its AVX-512 kernels and ops.normalize, forward and backward)"
		else if (s ~ /kernels\/conv\.|Conv(Rows|KernelRows)|avx512\.conv[0-9]/) k = "convolutions without patches: the products (conv kernels) and the grids"
		else if (s ~ /kernels\/avx512\.cols|tallTN/) k = "kernel gradients (cols kernels: a convolution'"'"'s kernel, a dense layer'"'"'s weights)"
		else if (s ~ /kernels\/avx512|kernels\/matrix|kernels\/avx2\.gemm|blas\.|openblas|sgemm|Sgemm/) k = "other matrix products (AVX-512 kernels, packing, OpenBLAS)"
		else if (s ~ /ops\.patches|Patches/) k = "patches: im2col and its gradient (first layer, strided convolutions)"
		else if (s ~ /sumRows|SumRows/) k = "bias gradients (column sums)"
		else if (s ~ /avx2\.addTo|avx2\.AddTo|avx2\.add|ops\.addTo|AddValues/) k = "adds (gradient sums, patches gradient scatter)"
		else if (s ~ /ops\.binary|ops\.Binary/) k = "merges (Add)"
		else if (s ~ /runtime\./) k = "Go runtime (copies, clearing, GC)"
		else k = "other"
		sum[k] += p
	} END { for (k in sum) printf "%6.1f%%  %s\n", sum[k], k }' | sort -rn >"$dir/kinds"
echo
echo "by kind:"
cat "$dir/kinds"
