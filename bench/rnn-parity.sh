#!/bin/sh
# Checks gokeras' recurrent layers (SimpleRNN, LSTM, GRU) against PyTorch's
# nn.RNN, nn.LSTM and nn.GRU given the same weights: bench/rnnparity writes,
# for each case of its table (LSTM and GRU, last state and the whole
# sequence read backwards; SimpleRNN's sequence), the weights in Keras'
# layout, a batch of 4 sequences of 50 timesteps, and what gokeras computes
# (the output and the gradients in float64 on the layer's own graph, the
# output of a /CPU:0 model in float32, and 10 SGD steps of it); then
# bench/rnn_parity.py computes the same in PyTorch (gates reordered: Keras'
# GRU z, r, h is PyTorch's r, z, n; LSTM's i, f, c, o is i, f, g, o) and
# checks them (its docstring lists the tolerances).
#
#   bench/rnn-parity.sh
#   bench/record.sh rnn-parity -- bench/rnn-parity.sh     (bench/results/rnn-parity-DATE.txt)
#
# Exits 1 if a check fails, 2 if it could not run. Needs Go and Debian's
# python3-torch; PYTHON overrides /usr/bin/python3.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
	echo "rnn-parity.sh: $PY cannot import torch and numpy: sudo apt-get install -y python3-torch" >&2
	exit 2
fi
RUN=$(mktemp)
trap 'rm -f "$RUN"' EXIT
echo "\$ go run ./bench/rnnparity --out RUN.json $*"
if ! go run ./bench/rnnparity --out "$RUN" "$@"; then
	echo "FAIL: bench/rnnparity failed"
	exit 2
fi
echo "\$ $PY bench/rnn_parity.py RUN.json"
s=0
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" bench/rnn_parity.py "$RUN" || s=$?
case $s in
0 | 1) exit $s ;;
*)
	echo "FAIL: rnn_parity.py exit status $s"
	exit 2
	;;
esac
