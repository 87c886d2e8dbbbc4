#!/bin/sh
# Runs bench/cnn-parity-control.sh for each variant (the CNN parity check on
# this tree, then on a copy with every loss gradient scaled by 32/33, then
# the margins between them) and writes each variant's output to
# bench/results/cnn-parity-DATE-VARIANT.txt (resnet20:
# bench/results/resnet20-parity-DATE.txt; DATE: today, UTC), headed by
# the command and its exit status. The output names the CPU model and
# flags, the commit, the date, the Go, torch and numpy versions and the
# commands it ran.
#
#   bench/cnn-parity-results.sh               # plain, then batchnorm
#   bench/cnn-parity-results.sh plain         # one variant
#   bench/cnn-parity-results.sh resnet20      # ResNet-20
#
# Exits 1 if any variant's control is not as required (see
# cnn-parity-control.sh), else 0.
set -eu
cd "$(dirname "$0")/.."
day=$(date -u +%F)
status=0
for v in ${*:-plain batchnorm}; do
	out=bench/results/cnn-parity-$day-$v.txt
	[ "$v" != resnet20 ] || out=bench/results/resnet20-parity-$day.txt
	t0=$(date +%s)
	s=0
	sh bench/cnn-parity-control.sh "$v" >"$out.tmp" 2>&1 || s=$?
	t1=$(date +%s)
	{
		echo "# sh bench/cnn-parity-control.sh $v   (written by bench/cnn-parity-results.sh)"
		echo "# exit status $s, $((t1 - t0)) s on $(nproc) cores shared with other work"
		echo
		cat "$out.tmp"
	} >"$out"
	rm -f "$out.tmp"
	echo "$out: exit status $s ($(tail -n 1 "$out"))"
	[ $s = 0 ] || status=1
done
exit $status
