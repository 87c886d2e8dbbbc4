#!/bin/sh
# Checks gokeras' MultiHeadAttention against PyTorch's nn.MultiheadAttention
# given the same weights: bench/mhaparity writes, for each case of its table
# (self-attention; cross-attention with a key and a value of their own
# sizes; an attention mask with the causal mask), the weights in Keras'
# layout, a batch of inputs, and what gokeras computes (the output, scores
# and gradients in float64 on the layer's own graph, the output of a /CPU:0
# model in float32, and 10 SGD steps of it); then bench/mha_parity.py
# computes the same in PyTorch (Keras' per-head kernels mapped onto
# in_proj_weight and out_proj) and checks them (its docstring lists the
# tolerances).
#
#   bench/mha-parity.sh
#   bench/record.sh mha-parity -- bench/mha-parity.sh     (bench/results/mha-parity-DATE.txt)
#   GOFLAGS=-tags=cudavm,kernelemu bench/mha-parity.sh --device /GPU:0   (the model on the emulated GPU)
#
# Exits 1 if a check fails, 2 if it could not run. Needs Go and Debian's
# python3-torch; PYTHON overrides /usr/bin/python3.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
	echo "mha-parity.sh: $PY cannot import torch and numpy: sudo apt-get install -y python3-torch" >&2
	exit 2
fi
RUN=$(mktemp)
trap 'rm -f "$RUN"' EXIT
echo "\$ go run ./bench/mhaparity --out RUN.json $*"
if ! go run ./bench/mhaparity --out "$RUN" "$@"; then
	echo "FAIL: bench/mhaparity failed"
	exit 2
fi
echo "\$ $PY bench/mha_parity.py RUN.json"
s=0
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" bench/mha_parity.py "$RUN" || s=$?
case $s in
0 | 1) exit $s ;;
*)
	echo "FAIL: mha_parity.py exit status $s"
	exit 2
	;;
esac
