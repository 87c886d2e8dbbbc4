#!/bin/sh
# Checks that gokeras trains the Keras cifar10_cnn as PyTorch does, for each
# model variant: the Go program bench/cnnparity builds the model (dropout
# rates 0, seed 1), trains 50 SGD steps (batch 32; lr 0.1 for the plain
# variant, 0.01 with BatchNormalization, which at 0.1 has learnt the
# synthetic task by step 20) on a synthetic dataset and writes its initial
# weights, the weights after every step (--trajectory), its loss at each
# step and its Predict outputs on one more batch; then bench/parity_cnn.py
# replays each step in PyTorch from gokeras' own weights before it (the
# "re-synced" check, which alone decides PASS or FAIL) and compares, at
# every step:
#   - the loss, within 1e-5 relative;
#   - the output layer's weights after the step (the last Dense, whose
#     gradient depends on forward values only), within 1e-5 relative to
#     them and 1e-3 of the step's change (2-norms);
#   - every other layer's weights, within 1e-2 of the step's change (2-norm:
#     float32 near-ties in ReLU and max pooling reroute parts of these
#     gradients, by up to 3.1e-3 of a step measured in gokeras and 5.3e-3 in
#     PyTorch float32 against float64; one step of a run may reach 2e-2,
#     the worst near-tie: parity_cnn.py --near-tie-steps);
#   - BatchNormalization's moving statistics, within 1e-5 relative;
# and, after the last step, the eval-mode outputs within 1e-6. A loss
# gradient scaled by 32/33 moves every step by 3.0e-2 of itself and fails
# (bench/cnn-parity-control.sh shows it). See parity_cnn.py's docstring for
# why each figure is measured as it is. It also prints, as information, the
# free-running comparison (each framework trains the 50 steps on its own)
# beside PyTorch's own drift (oneDNN off vs on, float32 vs float64).
#
#   bench/parity.sh                      # both CNN variants: plain, batchnorm
#   bench/parity.sh batchnorm            # one variant (or VARIANT=batchnorm)
#   bench/parity.sh resnet20             # ResNet-20 (applications.ResNetV1)
#   bench/parity.sh --mutate-grad-scale plain
#                                        # the control: gokeras built from a
#                                        # copy of this tree in which every
#                                        # loss gradient is scaled by 32/33
#                                        # (ops/loss.go's lossGrad); it must
#                                        # FAIL (exit 1)
#
# Options: --mutate-grad-scale (above); --no-free-run (only the re-synced
# check); --figures DIR (parity_cnn.py writes DIR/VARIANT.json with the
# per-step figures, which bench/cnn_parity_margins.py compares). STEPS, LR
# and BATCH override the step settings (50; 0.1 plain, 0.01 batchnorm; 32):
# parity_cnn.py prints what a 32/33 gradient would read at the settings
# given.
#
# Variants: plain (the cifar10_cnn) and batchnorm (a BatchNormalization
# between the first convolution and its ReLU); resnet20, Keras'
# cifar10_resnet ResNet v1 (applications.ResNetV1(20, ...), a functional
# model with merges and an L2 kernel penalty in the loss) against
# bench/torch_resnet.py's twin, at lr 0.01, its hidden layers compared with
# the nearer of PyTorch's float32 and float64 replays (parity_cnn.py
# --or-float64: float32 alone parts PyTorch from itself by up to 1.3e-2 of
# a step there). Prints the machine (CPU model
# and flags), the date, the commit, the commands and parity_cnn.py's
# reports, then one PASS or FAIL line per variant; exits 1 if any variant
# fails, 2 if it could not run. Needs Go and Debian's python3-torch (sudo
# apt-get install -y python3-torch); PYTHON overrides /usr/bin/python3.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
STEPS=${STEPS:-50}
LR=${LR:-}
BATCH=${BATCH:-32}
mutate=""
freerun=""
figures=""
while [ $# -gt 0 ]; do
	case $1 in
	--mutate-grad-scale) mutate=1 ;;
	--no-free-run) freerun=--no-free-run ;;
	--figures)
		[ $# -ge 2 ] || {
			echo "parity.sh: --figures needs a directory" >&2
			exit 2
		}
		figures=$2
		shift
		;;
	-*)
		echo "parity.sh: unknown option $1" >&2
		exit 2
		;;
	*) break ;;
	esac
	shift
done
VARIANTS=${*:-${VARIANT:-plain batchnorm}}
for v in $VARIANTS; do
	case $v in
	plain | batchnorm | resnet20) ;;
	*)
		echo "parity.sh: unknown variant $v (want plain, batchnorm or resnet20)" >&2
		exit 2
		;;
	esac
done
if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
	echo "parity.sh: $PY cannot import torch and numpy: sudo apt-get install -y python3-torch" >&2
	exit 2
fi
[ -z "$figures" ] || mkdir -p "$figures"
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
echo "machine: ${model:-unknown CPU}, $(nproc) cores ($(uname -sm))"
echo "cpu flags: $(sed -n 's/^flags[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | awk '{print $2}' | tr '\n' ' ')
echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)${dirty:+ with uncommitted changes to: $dirty}"
echo "$(go version); $("$PY" -c 'import sys, torch, numpy; print(f"python {sys.version.split()[0]}, torch {torch.__version__}, numpy {numpy.__version__}")')"
echo "variants: $VARIANTS; $STEPS SGD steps, lr ${LR:-0.1 plain, 0.01 batchnorm and resnet20}, batch $BATCH"

# SRC is the tree bench/cnnparity is built from: this one, or for the
# control a copy of it (its uncommitted changes included, .git left out)
# with the mutation applied there; this tree is never changed.
SRC=.
if [ -n "$mutate" ]; then
	SRC=$DIR/mutated
	mkdir "$SRC"
	tar -C . --exclude=./.git -cf - . | tar -C "$SRC" -xf -
	# The one function every loss gradient goes through on the CPU
	# (ops.lossGradOp.Do and ops.LossGradientWith, which device/cpu calls):
	# its scale becomes 32/33 of itself.
	sed -i '/^func lossGrad\[T float\](/a\
	scale *= 32.0 / 33 // parity.sh --mutate-grad-scale: every loss gradient scaled by 32/33' "$SRC/ops/loss.go"
	if [ "$(grep -c 'parity.sh --mutate-grad-scale' "$SRC/ops/loss.go")" != 1 ]; then
		echo "parity.sh: --mutate-grad-scale: ops/loss.go has no single 'func lossGrad[T float](': the mutation did not apply" >&2
		exit 2
	fi
	echo
	echo "CONTROL (--mutate-grad-scale): bench/cnnparity is built from a copy of this tree in which every loss"
	echo "gradient is scaled by 32/33; the check is expected to FAIL. The mutation, in the copy:"
	diff -u ops/loss.go "$SRC/ops/loss.go" | sed 's/^/    /' || true
fi

results=""
status=0
for v in $VARIANTS; do
	echo
	echo "======== variant $v${mutate:+ (CONTROL: loss gradients scaled by 32/33)}"
	lr=$LR
	[ -n "$lr" ] || case $v in
	plain) lr=0.1 ;;
	batchnorm | resnet20) lr=0.01 ;;
	esac
	# ResNet-20's hidden layers: the nearer of PyTorch's float32 and
	# float64 replays (parity_cnn.py's docstring says why).
	or64=""
	[ "$v" != resnet20 ] || or64=--or-float64
	args="--variant $v --steps $STEPS --lr $lr --batch-size $BATCH --trajectory"
	echo "\$ ${mutate:+(cd MUTATED-COPY && }go run ./bench/cnnparity --out DIR/$v $args${mutate:+)}"
	# shellcheck disable=SC2086 # args is split on purpose
	if ! (cd "$SRC" && go run ./bench/cnnparity --out "$DIR/$v" $args); then
		results="$results
FAIL: variant $v: bench/cnnparity failed"
		status=1
		continue
	fi
	echo
	fig=""
	[ -z "$figures" ] || fig="--figures $figures/$v.json"
	# As bench/compare.py does for PyTorch: without the OpenBLAS overrides
	# some machines set for old builds.
	echo "\$ env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $PY bench/parity_cnn.py DIR/$v $freerun $or64 $fig"
	s=0
	# shellcheck disable=SC2086
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" bench/parity_cnn.py "$DIR/$v" $freerun $or64 $fig >"$DIR/$v.out" 2>&1 || s=$?
	cat "$DIR/$v.out"
	last=$(tail -n 1 "$DIR/$v.out")
	case $s:$last in
	0:PASS* | 1:FAIL*) results="$results
$last${mutate:+ (CONTROL: loss gradients scaled by 32/33)}" ;;
	*)
		results="$results
FAIL: variant $v: parity_cnn.py exit status $s${last:+ ($last)}"
		status=1
		;;
	esac
	[ "$s" = 0 ] || status=1
	rm -rf "${DIR:?}/$v"
done
echo
echo "======== summary (the re-synced check decides; the free-running drift is information)$results"
exit $status
