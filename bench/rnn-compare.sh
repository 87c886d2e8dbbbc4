#!/bin/sh
# Issue 30's CPU benchmark side by side: a training step of LSTM(128) (or
# LAYER=GRU, SimpleRNN) over 100 timesteps of 64 features at batch 32 in
# gokeras (go run ./bench/rnnspeed) and in PyTorch (bench/torch_rnn.py, its
# twin), alternating, ROUNDS rounds; each round PyTorch gets 1 and 2
# threads (its best counts), with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
# unset for PyTorch's runs only. Prints each run's median ms/step.
#
#   bench/record.sh lstm-speed -- bench/rnn-compare.sh
#   LAYER=GRU ROUNDS=5 bench/rnn-compare.sh
set -eu
cd "$(dirname "$0")/.."
LAYER=${LAYER:-LSTM} ROUNDS=${ROUNDS:-3} BATCHES=${BATCHES:-20}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/rnnspeed" ./bench/rnnspeed
for r in $(seq "$ROUNDS"); do
	echo "== round $r"
	echo "gokeras: $("$dir/rnnspeed" --layer "$LAYER" --batches "$BATCHES" | tail -1)"
	for th in 1 2; do
		echo "pytorch, $th thread(s): $(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/torch_rnn.py --layer "$LAYER" --batches "$BATCHES" --threads "$th" | tail -1)"
	done
done
