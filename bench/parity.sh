#!/bin/sh
# Checks that gokeras trains the Keras cifar10_cnn as PyTorch does: the Go
# program bench/cnnparity builds the model (dropout rates 0, seed 1), writes
# its initial weights, a synthetic dataset and its loss at each of 50 SGD
# steps (and, with --trajectory, the weights after each step); then
# bench/parity_cnn.py trains the same steps in float32 PyTorch from the
# same weights and compares the losses (exit 1 beyond 1e-5 relative).
#
#   bench/parity.sh                      # the plain cifar10_cnn
#   VARIANT=plain bench/parity.sh        # the model variant (only plain so far)
#   bench/parity.sh | tee bench/results/cnn-parity-$(date +%F).txt
#
# Prints the machine, the date, the commands and parity_cnn.py's report;
# exits with parity_cnn.py's status. Needs Go and Debian's python3-torch
# (sudo apt-get install -y python3-torch); PYTHON overrides /usr/bin/python3.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
VARIANT=${VARIANT:-plain}
if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
	echo "parity.sh: $PY cannot import torch and numpy: sudo apt-get install -y python3-torch" >&2
	exit 2
fi
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
echo "machine: ${model:-unknown CPU}, $(nproc) cores ($(uname -sm))"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | awk '{print $2}' | tr '\n' ' ')
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)${dirty:+ with uncommitted changes to: $dirty}"
echo "$(go version); $("$PY" -c 'import sys, torch, numpy; print(f"python {sys.version.split()[0]}, torch {torch.__version__}, numpy {numpy.__version__}")')"
echo
echo "\$ go run ./bench/cnnparity --out DIR --variant $VARIANT --trajectory"
go run ./bench/cnnparity --out "$DIR" --variant "$VARIANT" --trajectory
echo
# As bench/compare.py does for PyTorch: without the OpenBLAS overrides
# some machines set for old builds.
echo "\$ env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $PY bench/parity_cnn.py DIR"
status=0
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" bench/parity_cnn.py "$DIR" || status=$?
exit $status
