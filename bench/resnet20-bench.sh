#!/bin/sh
# Times ResNet-20's training step (Keras' cifar10_resnet ResNet v1,
# `train --model resnet20`) on the CPU in gokeras and in PyTorch
# (bench/torch_resnet.py, the twin bench/parity.sh resnet20 checks), then
# measures the peak memory of a gokeras ResNet-20 epoch at batch 128, and
# records both in bench/results/resnet20-bench-DATE.txt (bench/record.sh: the
# CPU, its flags, the commit, the load before and after).
#
#   bench/resnet20-bench.sh                   # batches 32 and 128, 3 rounds of 20 steps
#   ROUNDS=5 STEPS=50 bench/resnet20-bench.sh
#   RESULTS=- bench/resnet20-bench.sh          # only prints
#
# The timing is bench/compare.py --model resnet20 (through bench/run.sh):
# PyTorch and gokeras alternate, run after run; each round PyTorch gets the
# best of 1 and all cores' threads and of its default memory layout and
# channels-last; OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for
# PyTorch's runs only. Both train with SGD (lr 0.01) on random images,
# the convolutions' L2(1e-4) kernel penalty in the loss. The memory figure
# is `Maximum resident set size` of /usr/bin/time -v (bench/train.sh) over
# `train --model resnet20 --synthetic --batch-size 128 --epochs 1
# --steps-per-epoch RSS_STEPS` (default 20) on RSS_STEPS·128 synthetic
# samples: an epoch's training and the evaluation after it, bounded.
set -eu
cd "$(dirname "$0")/.."
BATCH_SIZES=${BATCH_SIZES:-32,128} ROUNDS=${ROUNDS:-3} STEPS=${STEPS:-20} RSS_STEPS=${RSS_STEPS:-20}
if [ "${RESULTS:-}" != - ]; then
	TORCH=1 exec bench/record.sh "${RESULTS:-resnet20-bench}" -- env RESULTS=- BATCH_SIZES="$BATCH_SIZES" ROUNDS="$ROUNDS" \
		STEPS="$STEPS" RSS_STEPS="$RSS_STEPS" bench/resnet20-bench.sh
fi
echo "== training step, gokeras and PyTorch alternating (bench/run.sh, bench/compare.py --model resnet20)"
env RESULTS=- MODEL=resnet20 BATCH_SIZES="$BATCH_SIZES" OPTIMIZERS=sgd ROUNDS="$ROUNDS" STEPS="$STEPS" VERBOSE=1 \
	sh bench/run.sh
echo
echo "== peak memory: one epoch of $RSS_STEPS steps at batch 128"
n=$((RSS_STEPS * 128))
echo "\$ bench/train.sh --device=/CPU:0 --model resnet20 --synthetic --synthetic-samples $n --batch-size 128 --epochs 1 --steps-per-epoch $RSS_STEPS --seed 1"
sh bench/train.sh --device=/CPU:0 --model resnet20 --synthetic --synthetic-samples "$n" --batch-size 128 --epochs 1 \
	--steps-per-epoch "$RSS_STEPS" --seed 1 2>&1 |
	grep -E 'BLAS:|Epoch|loss|Maximum resident|Elapsed \(wall|User time|System time|Exit status' || true
