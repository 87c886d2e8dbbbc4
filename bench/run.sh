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
#   VERBOSE=0 bench/run.sh       # without every run's median (printed by default)
#   MODEL=cnn INFERENCE=1 BATCH_SIZES=128 bench/run.sh   # inference: Predict one batch at a
#                                # time against torch.no_grad() in eval mode, ms/batch
#
# Every run is recorded: bench/record.sh writes the table, every run's median
# and a header naming the machine (CPU model and flags, the kernels gokeras
# uses, commit, date, Go's, PyTorch's and numpy's versions, the command) to
# bench/results/NAME-YYYY-MM-DD.txt, NAME being RESULTS or else
# MODEL-OPTIMIZERS-bBATCH_SIZES (e.g. mlp-sgd-momentum-adam-b32). RESULTS=-
# only prints.
#
# The rules of a fair comparison, kept by bench/compare.py: PyTorch and
# gokeras alternate, run after run, in one script; PyTorch gets the better of
# one and all cores' threads each round; OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE are unset for PyTorch's runs only.
#
# Installs python3-torch and libopenblas0-pthread with apt-get when missing
# (run as root). Needs Go to build cmd/train from this checkout.
set -eu
cd "$(dirname "$0")/.."
MODEL=${MODEL:-mlp} BATCH_SIZES=${BATCH_SIZES:-32,256} OPTIMIZERS=${OPTIMIZERS:-sgd} ROUNDS=${ROUNDS:-3} STEPS=${STEPS:-50}
INFERENCE=${INFERENCE:-0}
case $INFERENCE in 0) inference= ;; *) INFERENCE=1 inference=--inference ;; esac
case ${VERBOSE:-1} in 0) VERBOSE=0 verbose= ;; *) VERBOSE=1 verbose=--verbose ;; esac
if [ "${RESULTS:-}" != - ]; then
	name=${RESULTS:-$MODEL-$(echo "$OPTIMIZERS" | tr , -)-b$(echo "$BATCH_SIZES" | tr , -)}
	[ "$INFERENCE" = 1 ] && name=${RESULTS:-$MODEL-inference-b$(echo "$BATCH_SIZES" | tr , -)}
	# The command record.sh names is the whole run, every setting spelled out.
	exec bench/record.sh "$name" -- env RESULTS=- MODEL="$MODEL" BATCH_SIZES="$BATCH_SIZES" OPTIMIZERS="$OPTIMIZERS" \
		ROUNDS="$ROUNDS" STEPS="$STEPS" VERBOSE="$VERBOSE" INFERENCE="$INFERENCE" bench/run.sh
fi
PY=/usr/bin/python3
if ! "$PY" -c 'import torch' 2>/dev/null || ! ldconfig -p | grep -q 'libopenblas.so.0'; then
	echo "installing python3-torch and libopenblas0-pthread (apt-get)..." >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch libopenblas0-pthread >&2
fi
BIN=$(mktemp -d)/train
trap 'rm -rf "$(dirname "$BIN")"' EXIT
go build -o "$BIN" ./cmd/train
"$PY" bench/compare.py --train "$BIN" --python "$PY" --model "$MODEL" \
	--batch-sizes "$BATCH_SIZES" --optimizers "$OPTIMIZERS" --rounds "$ROUNDS" --steps "$STEPS" $verbose $inference
