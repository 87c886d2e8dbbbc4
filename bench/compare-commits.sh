#!/usr/bin/env bash
# compare-commits.sh — times train --benchmark at two commits on this
# machine, the runs alternating (old, new, old, new, ...) so that a change in
# the machine's load falls on both, for each model asked for. It answers
# "did this change make training slower?" for a refactor that must not.
#
#   bench/compare-commits.sh OLD NEW [ROUNDS [MODELS...]]
#   bench/record.sh house-speed -- bench/compare-commits.sh 76ab0d0 HEAD 3 mlp cnn
#
# Each run is train --device=/CPU:0 --synthetic --benchmark (50 steps after
# 5 warm-up steps, batch 32, seed 1; BATCH and STEPS change the batch size
# and the timed steps); the median ms/step of each run is printed, then,
# per model and commit, the best and the median of the runs.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: bench/compare-commits.sh OLD NEW [ROUNDS [MODELS...]]" >&2; exit 2; }
old=$(git -C "$repo" rev-parse --short "$1")
new=$(git -C "$repo" rev-parse --short "$2")
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
models=${*:-mlp cnn}
batch=${BATCH:-32}
steps=${STEPS:-50}
echo "batch $batch, $steps timed steps a run"
dir=$(mktemp -d)
cleanup() {
	for c in "$old" "$new"; do git -C "$repo" worktree remove --force "$dir/src-$c" 2>/dev/null || true; done
	rm -rf "$dir"
}
trap cleanup EXIT
for c in "$old" "$new"; do
	git -C "$repo" worktree add --detach "$dir/src-$c" "$c" >/dev/null 2>&1
	(cd "$dir/src-$c" && go build -o "$dir/train-$c" ./cmd/train)
done
for m in $models; do
	for r in $(seq "$rounds"); do
		for c in "$old" "$new"; do
			ms=$("$dir/train-$c" --device=/CPU:0 --synthetic --benchmark --model "$m" --seed 1 \
				--batch-size "$batch" --benchmark-steps "$steps" 2>&1 |
				sed -n 's/^median \([0-9.]*\) ms\/step.*/\1/p')
			echo "$m $c round $r: median ${ms:-?} ms/step"
			echo "$m $c $ms" >>"$dir/all"
		done
	done
done
echo
echo "model commit  best  median-of-runs (ms/step)"
for m in $models; do
	for c in "$old" "$new"; do
		awk -v m="$m" -v c="$c" '$1 == m && $2 == c { print $3 }' "$dir/all" | sort -n |
			awk -v m="$m" -v c="$c" '{ v[NR] = $1 } END { printf "%-5s %-7s %6.2f %6.2f\n", m, c, v[1], v[int((NR + 1) / 2)] }'
	done
done
