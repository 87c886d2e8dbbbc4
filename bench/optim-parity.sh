#!/bin/sh
# Checks every optimizer of package optim against a PyTorch twin: the Go
# program bench/optimparity trains a small model (Flatten -> Dense(64,
# relu) -> Dense(10, softmax), seed 1) for 50 steps of batch 32 on a
# synthetic dataset, in order, with each optimizer configuration of its
# table (every optimizer, SGD with momentum and Nesterov, AMSGrad, RMSprop
# with momentum and centered, clipnorm, clipvalue, global_clipnorm,
# weight_decay, ExponentialDecay), and writes the initial weights, the data
# and each configuration's Keras config and per-step losses; then
# bench/optim_parity.py trains a twin of each in PyTorch, float32 and
# float64 (torch.optim where its arithmetic is Keras', else Keras' TF
# formula in torch tensors; its docstring lists each difference), and
# checks: steps 1-10 within 1e-6 relative of the float32 twin, and over
# the 50 steps max |gokeras - twin64| <= 2 * max |twin32 - twin64| +
# 1e-6 * max |loss|.
#
#   bench/optim-parity.sh                       # every configuration
#   bench/optim-parity.sh adam nadam            # some (go run ./bench/optimparity --list)
#   bench/optim-parity.sh | tee bench/results/optim-parity-$(date +%F).txt
#
# Prints the machine, the date, the commit, the commands and
# optim_parity.py's report, ending with one PASS or FAIL line per
# configuration; exits 1 if any configuration fails, 2 if it could not
# run. Needs Go and Debian's python3-torch (sudo apt-get install -y
# python3-torch); PYTHON overrides /usr/bin/python3.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
CONFIGS=$(echo "$*" | tr ' ' ',')
if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
	echo "optim-parity.sh: $PY cannot import torch and numpy: sudo apt-get install -y python3-torch" >&2
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

echo "\$ go run ./bench/optimparity --out DIR${CONFIGS:+ --configs $CONFIGS}"
if ! go run ./bench/optimparity --out "$DIR" ${CONFIGS:+--configs "$CONFIGS"}; then
	echo "FAIL: bench/optimparity failed"
	exit 2
fi
echo
# As bench/parity.sh: without the OpenBLAS overrides some machines set for
# old builds.
echo "\$ env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $PY bench/optim_parity.py DIR"
s=0
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" bench/optim_parity.py "$DIR" || s=$?
case $s in
0 | 1) exit $s ;;
*)
	echo "FAIL: optim_parity.py exit status $s"
	exit 2
	;;
esac
