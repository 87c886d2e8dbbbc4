#!/bin/sh
# train.sh — builds cmd/train from this checkout and runs it with the given
# flags under /usr/bin/time -v, so the output ends with the peak resident
# memory ("Maximum resident set size") of the train process itself, not of
# the Go build. For a sample of train's output in a results file:
#
#   bench/record.sh train-sample -- bench/train.sh --device=/CPU:0 --synthetic --epochs 2
#
# Without /usr/bin/time (Debian: apt-get install time) it runs train alone.
set -eu
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/train" ./cmd/train
if [ -x /usr/bin/time ]; then
	/usr/bin/time -v "$dir/train" "$@"
else
	echo "train.sh: /usr/bin/time not found: no peak memory figure" >&2
	"$dir/train" "$@"
fi
