#!/bin/sh
# Shows that the CNN parity check (bench/parity.sh) can fail: for each
# variant it runs the check on this tree, which must PASS, then the control,
# bench/parity.sh --mutate-grad-scale, which builds bench/cnnparity from a
# copy of this tree in which every loss gradient is scaled by 32/33 (a 3%
# error in every step) and must FAIL; then bench/cnn_parity_margins.py sets
# the two runs' per-step figures side by side: the real code's worst step
# against each tolerance, and the control's smallest.
#
#   bench/cnn-parity-control.sh                # both variants: plain, batchnorm
#   bench/cnn-parity-control.sh plain          # one variant
#   bench/cnn-parity-control.sh resnet20       # ResNet-20
#
# Exits 0 if, for every variant, the real check passes, the control fails
# and the margins agree (a deciding figure beyond tolerance in the control,
# none in the real run); 1 otherwise; 2 if it could not run. The real run
# includes the free-running information; the control runs the re-synced
# check only. STEPS, LR, BATCH and PYTHON are passed on to bench/parity.sh.
# bench/cnn-parity-results.sh writes this script's output into
# bench/results/.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
VARIANTS=${*:-plain batchnorm}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
status=0
summary=""
for v in $VARIANTS; do
	echo "################ variant $v: the real gokeras (must PASS)"
	echo "\$ sh bench/parity.sh --figures DIR/real $v"
	s=0
	sh bench/parity.sh --figures "$DIR/real" "$v" || s=$?
	echo
	echo "################ variant $v: the control, every loss gradient scaled by 32/33 (must FAIL)"
	echo "\$ sh bench/parity.sh --mutate-grad-scale --no-free-run --figures DIR/control $v"
	c=0
	sh bench/parity.sh --mutate-grad-scale --no-free-run --figures "$DIR/control" "$v" || c=$?
	echo
	echo "\$ $PY bench/cnn_parity_margins.py DIR/real/$v.json DIR/control/$v.json"
	m=0
	if [ -f "$DIR/real/$v.json" ] && [ -f "$DIR/control/$v.json" ]; then
		"$PY" bench/cnn_parity_margins.py "$DIR/real/$v.json" "$DIR/control/$v.json" || m=$?
	else
		echo "no figures to compare (a run did not get as far as writing them)"
		m=2
	fi
	line="variant $v: real check exit $s ($([ $s = 0 ] && echo PASS, as required || echo 'not PASS: WRONG')),"
	line="$line control exit $c ($([ $c = 1 ] && echo FAIL, as required || echo 'not FAIL: WRONG')),"
	line="$line margins $([ $m = 0 ] && echo separate the two || echo 'do NOT separate the two')"
	summary="$summary
$line"
	if [ $s != 0 ] || [ $c != 1 ] || [ $m != 0 ]; then
		status=1
	fi
	echo
done
echo "################ control summary$summary"
echo "$([ $status = 0 ] && echo 'CONTROL OK: the check passes the real code and fails every loss gradient scaled by 32/33' || echo 'CONTROL NOT OK')"
exit $status
