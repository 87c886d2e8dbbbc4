#!/bin/sh
# Issue 30's transformer benchmark side by side: a training step of a
# 2-block transformer encoder (d_model 128, 4 heads, feed-forward 512, no
# dropout) over 128 steps at batch 32 in gokeras (go run
# ./bench/transformerspeed) and in PyTorch (bench/torch_transformer.py,
# nn.TransformerEncoderLayer), alternating, ROUNDS rounds; each round
# PyTorch gets 1 and 2 threads (its best counts), with OPENBLAS_CORETYPE
# and OPENBLAS_L2_SIZE unset for PyTorch's runs only. Prints each run's
# median ms/step. Run it on a quiet machine.
#
#   bench/record.sh transformer-speed -- bench/transformer-compare.sh
#   ROUNDS=5 BATCHES=10 bench/transformer-compare.sh
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} BATCHES=${BATCHES:-20}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/transformerspeed" ./bench/transformerspeed
for r in $(seq "$ROUNDS"); do
	echo "== round $r"
	echo "gokeras: $("$dir/transformerspeed" --batches "$BATCHES" | tail -1)"
	for th in 1 2; do
		echo "pytorch, $th thread(s): $(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/torch_transformer.py --batches "$BATCHES" --threads "$th" | tail -1)"
	done
done
