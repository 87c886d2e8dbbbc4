#!/usr/bin/env bash
# distributed.sh — on one machine, one process against two: the CIFAR-10 MLP's
# training step (SGD, synthetic data, `train --benchmark`) with
#   1 process, 1 thread          GOMAXPROCS=1 train --benchmark
#   1 process, all cores         train --benchmark
#   2 processes, 1 thread each   mpirun -np 2 -x GOMAXPROCS=1 train --distributed --benchmark
#   the same, overlap off        ... -x GOKERAS_REDUCE_OVERLAP=0 ... (the all-reduce after the backward pass)
# at each batch size (the global batch), the four alternating, ROUNDS times,
# then the median of each one's medians. Needs Open MPI (apt-get install
# openmpi-bin libopenmpi3). Record it:
#
#   bench/record.sh distributed -- bench/distributed.sh
#
# Environment: BATCH_SIZES [64,256]  ROUNDS [3]  STEPS timed per run [30]
set -euo pipefail
cd "$(dirname "$0")/.."
batches=${BATCH_SIZES:-64,256}
rounds=${ROUNDS:-3}
steps=${STEPS:-30}
command -v mpirun >/dev/null || {
	echo "distributed.sh: mpirun not found: apt-get install openmpi-bin libopenmpi3" >&2
	exit 2
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/train" ./cmd/train
mpi=(mpirun -np 2)
if [ "$(id -u)" = 0 ]; then mpi+=(--allow-run-as-root); fi
if [ "$(nproc)" -lt 2 ]; then mpi+=(--oversubscribe); fi
bench=(--benchmark --device=/CPU:0 --benchmark-steps "$steps" --benchmark-warmup 5 --seed 1)
configs=("1 process, 1 thread" "1 process, all cores" "2 processes, 1 thread each" "2 processes, overlap off")

run() { # config index, batch: prints the median ms/step and samples/s
	local out
	case $1 in
	0) out=$(GOMAXPROCS=1 "$dir/train" "${bench[@]}" --batch-size "$2") ;;
	1) out=$("$dir/train" "${bench[@]}" --batch-size "$2") ;;
	2) out=$("${mpi[@]}" -x GOMAXPROCS=1 "$dir/train" "${bench[@]}" --batch-size "$2" --distributed) ;;
	3) out=$("${mpi[@]}" -x GOMAXPROCS=1 -x GOKERAS_REDUCE_OVERLAP=0 "$dir/train" "${bench[@]}" --batch-size "$2" --distributed) ;;
	esac
	sed -n 's/^median \([0-9.]*\) ms\/step.* - \([0-9]*\) samples\/s - .*/\1 \2/p' <<<"$out"
}

echo "CIFAR-10 MLP, SGD, synthetic data: $steps timed steps a run (5 warm-up), $rounds rounds, the four runs alternating; $(nproc) cores"
echo "$("$dir/train" --benchmark --benchmark-steps 1 --benchmark-warmup 0 --batch-size 32 | grep '^BLAS:')"
declare -A all
for r in $(seq "$rounds"); do
	for b in ${batches//,/ }; do
		for c in 0 1 2 3; do
			sleep 2
			read -r ms sps < <(run "$c" "$b")
			echo "round $r, batch $b, ${configs[$c]}: $ms ms/step, $sps samples/s"
			all[$b,$c]+="$ms "
		done
	done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo
printf '%-28s %6s %14s %10s\n' "" batch "median ms/step" samples/s
for b in ${batches//,/ }; do
	for c in 0 1 2 3; do
		m=$(median <<<"${all[$b,$c]}")
		printf '%-28s %6s %14.1f %10.0f\n' "${configs[$c]}" "$b" "$m" "$(awk -v b="$b" -v m="$m" 'BEGIN {print b / m * 1000}')"
	done
done
