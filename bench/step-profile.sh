#!/bin/sh
# Where a gokeras step's time goes on the CPU, by step kind: builds with
# the tag steptimes (device/internal/plan's steptimes.go: each step timed
# on the host, the kinds' times printed after 22 runs, runs 3 to 22
# counted) and runs either issue 30's transformer benchmark
# (bench/transformerspeed) or train --benchmark on a model, with 2 warm-up
# runs and 20 timed ones. A profile, not a speed figure: the timing
# itself costs a little.
#
#   bench/record.sh transformer-profile -- bench/step-profile.sh transformer
#   bench/step-profile.sh cnn 128              # train --model cnn at batch 128
#   bench/step-profile.sh resnet20 32 inference
set -eu
cd "$(dirname "$0")/.."
what=${1:?usage: bench/step-profile.sh transformer | MODEL [BATCH] [inference]}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ "$what" = transformer ]; then
	go build -tags steptimes -o "$dir/transformerspeed" ./bench/transformerspeed
	echo "\$ transformerspeed --batches 22 (built with -tags steptimes)"
	"$dir/transformerspeed" --batches 22 2>&1
	exit 0
fi
batch=${2:-32}
extra=
[ "${3:-}" = inference ] && extra=--benchmark-inference
go build -tags steptimes -o "$dir/train" ./cmd/train
echo "\$ train --model $what --synthetic --benchmark $extra --batch-size $batch --benchmark-steps 20 --benchmark-warmup 2 --device=/CPU:0 --seed 1 (built with -tags steptimes)"
"$dir/train" --model "$what" --synthetic --benchmark $extra --batch-size "$batch" --benchmark-steps 20 \
	--benchmark-warmup 2 --device=/CPU:0 --seed 1 2>&1
