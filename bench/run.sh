#!/bin/sh
# Compares one training step of the CIFAR-10 MLP (MODEL=cnn: the Keras
# cifar10_cnn) in PyTorch (Debian's python3-torch, on OpenBLAS) and in
# gokeras, on this machine.
#
#   bench/run.sh                 # batch sizes 32 and 256, 3 rounds
#   MODEL=cnn BATCH_SIZES=32 bench/run.sh   # the cifar10_cnn (bench/torch_cnn.py, train --model cnn)
#   ROUNDS=5 BATCH_SIZES=32 bench/run.sh
#   OPTIMIZERS=sgd,momentum,adam BATCH_SIZES=32 bench/run.sh   # each optimizer
#   OPTIMIZERS=rmsprop,adagrad,adadelta,adamax,adamw,nadam BATCH_SIZES=32 bench/run.sh
#                                # (any --optimizer of train, and momentum; Keras'
#                                # defaults on both sides, bench/torch_mlp.py's OPTIMIZERS)
#   VERBOSE=1 bench/run.sh       # every run's median too, on stderr
#
# Installs python3-torch and libopenblas0-pthread with apt-get when missing
# (run as root). Needs Go to build cmd/train from this checkout.
set -eu
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
if ! "$PY" -c 'import torch' 2>/dev/null || ! ldconfig -p | grep -q 'libopenblas.so.0'; then
	echo "installing python3-torch and libopenblas0-pthread (apt-get)..." >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch libopenblas0-pthread >&2
fi
BIN=$(mktemp -d)/train
trap 'rm -rf "$(dirname "$BIN")"' EXIT
go build -o "$BIN" ./cmd/train
exec "$PY" bench/compare.py --train "$BIN" --python "$PY" --model "${MODEL:-mlp}" \
	--batch-sizes "${BATCH_SIZES:-32,256}" --optimizers "${OPTIMIZERS:-sgd}" --rounds "${ROUNDS:-3}" --steps "${STEPS:-50}" ${VERBOSE:+--verbose}
