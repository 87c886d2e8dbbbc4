#!/bin/sh
# Times package internal/kernels/conv's benchmarks at two commits on this
# machine, the runs alternating (old, new, old, new, ...) so that a change
# in the machine's load falls on both, then prints each benchmark's best
# and median time per commit.
#
#   bench/conv-commits.sh OLD NEW [ROUNDS [PATTERN [BENCHTIME]]]
#   bench/record.sh conv-prefetch -- bench/conv-commits.sh HEAD~1 HEAD 4 ConvBatch128 30x
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: bench/conv-commits.sh OLD NEW [ROUNDS [PATTERN [BENCHTIME]]]" >&2; exit 2; }
old=$(git -C "$repo" rev-parse --short "$1")
new=$(git -C "$repo" rev-parse --short "$2")
rounds=${3:-4}
pattern=${4:-ConvBatch128}
benchtime=${5:-30x}
dir=$(mktemp -d)
trap 'for c in "$old" "$new"; do git -C "$repo" worktree remove --force "$dir/src-$c" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
for c in "$old" "$new"; do
	git -C "$repo" worktree add -q --detach "$dir/src-$c" "$c"
	(cd "$dir/src-$c" && go test -c -o "$dir/conv-$c.test" ./internal/kernels/conv)
done
echo "benchmark $pattern, $benchtime a run, $rounds rounds, $old and $new alternating"
r=1
while [ "$r" -le "$rounds" ]; do
	for c in "$old" "$new"; do
		"$dir/conv-$c.test" -test.run XXX -test.bench "$pattern" -test.benchtime "$benchtime" 2>&1 |
			awk -v c="$c" -v r="$r" '/^Benchmark/ { print c, "round", r, $1, $3 / 1e6, "ms" }'
	done
	r=$((r + 1))
done | tee "$dir/runs"
echo
echo "benchmark, then per commit: best and median (ms)"
awk '{ t[$4 " " $1] = t[$4 " " $1] " " $5 } END { for (k in t) print k, t[k] }' "$dir/runs" | sort |
	awk '{ n = split($0, f, " "); m = 0; for (i = 3; i <= n; i++) v[++m] = f[i] + 0;
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
		printf "%-50s %s  best %.2f  median %.2f\n", $1, $2, v[1], v[int((m + 1) / 2)] }'
