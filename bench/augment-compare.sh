#!/bin/sh
# Issue 28's augmentation check: `train --benchmark` of a MODEL (default
# cnn) at batch 32 on /CPU:0 without and with --augment (RandomFlip and
# RandomTranslation in front of the model, on the device), alternating,
# ROUNDS rounds (default 3). Prints each run's median line.
#
#   bench/record.sh cnn-augment -- bench/augment-compare.sh
#   MODEL=resnet20 ROUNDS=5 bench/augment-compare.sh
set -eu
cd "$(dirname "$0")/.."
MODEL=${MODEL:-cnn} ROUNDS=${ROUNDS:-3} STEPS=${STEPS:-40}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/train" ./cmd/train
for r in $(seq "$ROUNDS"); do
	for aug in "" --augment; do
		printf 'round %s %s: ' "$r" "${aug:-plain}"
		"$dir/train" --benchmark --model "$MODEL" --device=/CPU:0 --batch-size 32 --benchmark-steps "$STEPS" \
			--benchmark-warmup 5 --seed 1 $aug | grep median
	done
done
