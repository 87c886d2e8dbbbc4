#!/bin/sh
# Issue 30's transformer benchmark side by side: a training step of a
# 2-block transformer encoder (d_model 128, 4 heads, feed-forward 512, no
# dropout) over 128 steps at batch 32 in gokeras (go run
# ./bench/transformerspeed) and in PyTorch (bench/torch_transformer.py,
# nn.TransformerEncoderLayer), alternating, ROUNDS rounds; each round
# PyTorch gets 1 and 2 threads (its best counts), with OPENBLAS_CORETYPE
# and OPENBLAS_L2_SIZE unset for PyTorch's runs only. Prints each run's
# median ms/step. Run it on a quiet machine.
#
# With OLD set to a commit, each round also times gokeras as it was at
# that commit (built from a temporary worktree), before the current tree.
#
#   bench/record.sh transformer-speed -- bench/transformer-compare.sh
#   ROUNDS=5 BATCHES=10 bench/transformer-compare.sh
#   OLD=c7e08d5 bench/transformer-compare.sh
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} BATCHES=${BATCHES:-20} OLD=${OLD:-}
dir=$(mktemp -d)
trap 'git worktree remove --force "$dir/old" 2>/dev/null || true; rm -rf "$dir"' EXIT
go build -o "$dir/transformerspeed" ./bench/transformerspeed
if [ -n "$OLD" ]; then
	OLD=$(git rev-parse --short "$OLD")
	git worktree add --detach "$dir/old" "$OLD" >/dev/null 2>&1
	(cd "$dir/old" && go build -o "$dir/transformerspeed-old" ./bench/transformerspeed)
fi
for r in $(seq "$ROUNDS"); do
	echo "== round $r"
	if [ -n "$OLD" ]; then
		echo "gokeras at $OLD: $("$dir/transformerspeed-old" --batches "$BATCHES" | tail -1)"
	fi
	echo "gokeras: $("$dir/transformerspeed" --batches "$BATCHES" | tail -1)"
	for th in 1 2; do
		echo "pytorch, $th thread(s): $(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/torch_transformer.py --batches "$BATCHES" --threads "$th" | tail -1)"
	done
done
