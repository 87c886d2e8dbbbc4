#!/bin/sh
# Checks that gokeras trains the Keras cifar10_cnn as PyTorch does, for each
# model variant: the Go program bench/cnnparity builds the model (dropout
# rates 0, seed 1), trains 50 SGD steps on a synthetic dataset and writes
# its initial weights, the weights after every step (--trajectory), its loss
# at each step and its Predict outputs on one more batch; then
# bench/parity_cnn.py runs each step in float32 PyTorch from gokeras' own
# weights before it (the "re-synced" check, which alone decides PASS or
# FAIL: each step's loss within 1e-5 relative, the weights after it within
# 5% of the step's largest change of each tensor, BatchNormalization's
# moving statistics within 0.1% of theirs, and the eval-mode outputs after
# the last step within 1e-5), and prints as information the free-running
# comparison (each framework trains the 50 steps on its own) beside
# PyTorch's own drift (oneDNN off vs on, float32 vs float64).
#
#   bench/parity.sh                      # both variants: plain, batchnorm
#   bench/parity.sh batchnorm            # one variant (or VARIANT=batchnorm)
#   bench/parity.sh | tee bench/results/cnn-parity-$(date +%F).txt
#
# Variants: plain (the cifar10_cnn) and batchnorm (a BatchNormalization
# between the first convolution and its ReLU). Prints the machine, the date,
# the commit, the commands and parity_cnn.py's reports, then one PASS or
# FAIL line per variant; exits 1 if any variant fails, 2 if it could not
# run. Needs Go and Debian's python3-torch (sudo apt-get install -y
# python3-torch); PYTHON overrides /usr/bin/python3.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
VARIANTS=${*:-${VARIANT:-plain batchnorm}}
for v in $VARIANTS; do
	case $v in
	plain | batchnorm) ;;
	*)
		echo "parity.sh: unknown variant $v (want plain or batchnorm)" >&2
		exit 2
		;;
	esac
done
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
echo "variants: $VARIANTS"

results=""
status=0
for v in $VARIANTS; do
	echo
	echo "======== variant $v"
	echo "\$ go run ./bench/cnnparity --out DIR/$v --variant $v --trajectory"
	if ! go run ./bench/cnnparity --out "$DIR/$v" --variant "$v" --trajectory; then
		results="$results
FAIL: variant $v: bench/cnnparity failed"
		status=1
		continue
	fi
	echo
	# As bench/compare.py does for PyTorch: without the OpenBLAS overrides
	# some machines set for old builds.
	echo "\$ env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $PY bench/parity_cnn.py DIR/$v"
	s=0
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" bench/parity_cnn.py "$DIR/$v" >"$DIR/$v.out" 2>&1 || s=$?
	cat "$DIR/$v.out"
	last=$(tail -n 1 "$DIR/$v.out")
	case $s:$last in
	0:PASS* | 1:FAIL*) results="$results
$last" ;;
	*)
		results="$results
FAIL: variant $v: parity_cnn.py exit status $s${last:+ ($last)}"
		status=1
		;;
	esac
	rm -rf "${DIR:?}/$v"
done
echo
echo "======== summary (the re-synced check decides; the free-running drift is information)$results"
exit $status
