#!/usr/bin/env bash
# interrupt.sh — docs/train.md's Ctrl-C example, run for real: train on 2,000
# synthetic samples for 3 epochs with --checkpoint, send SIGINT (what Ctrl-C
# sends) in the third epoch, then resume with --validation --plot --trace.
# Prints both runs' output and exit status. Record it:
#
#   bench/record.sh interrupt-sample -- bench/interrupt.sh
#
# Environment: DELAY, seconds into the third epoch to send the signal [0.2]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "$(trap -p INT)" ]; then
	# Started in the background of a shell without job control (nohup cmd &),
	# this shell and every child ignore SIGINT, and train keeps it ignored.
	echo "interrupt.sh: SIGINT is ignored here ($(trap -p INT)): run it from a terminal or a foreground job" >&2
	exit 2
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/train" ./cmd/train
ck=$dir/ck.safetensors
args=(--device=/CPU:0 --synthetic --synthetic-samples 2000 --epochs 3 --batch-size 32 --checkpoint "$ck" --throughput --seed 11)

echo "\$ train ${args[*]//$dir/DIR}    # SIGINT in epoch 3"
# With job control on, the background train gets SIGINT's default action;
# without it, a script's background commands start with SIGINT ignored, and
# train keeps an ignored signal ignored.
set -m
"$dir/train" "${args[@]}" >"$dir/out" 2>&1 &
pid=$!
for _ in $(seq 1200); do # up to two minutes for epoch 3 to start
	grep -q '^Epoch 3/3' "$dir/out" && break
	sleep 0.1
done
sleep "${DELAY:-0.2}"
kill -INT "$pid"
status=0
wait "$pid" || status=$?
set +m
sed "s#$dir#DIR#g" "$dir/out"
echo "(exit status $status)"
if [ "$status" -ne 130 ]; then
	echo "interrupt.sh: train ended before the signal (status $status, not 130): run again with a smaller DELAY" >&2
	exit 1
fi
echo
echo "\$ train ${args[*]//$dir/DIR} --resume DIR/ck.safetensors --validation --plot DIR/h.png --trace"
status=0
"$dir/train" "${args[@]}" --resume "$ck" --validation --plot "$dir/h.png" --trace >"$dir/out" 2>&1 || status=$?
sed "s#$dir#DIR#g" "$dir/out"
echo "(exit status $status)"
