#!/usr/bin/env bash
# gpu-verify.sh — check the CUDA build on a machine with an NVIDIA GPU.
#
# Runs the programs scripts/build-cuda.sh --bin DIR linked (on any machine
# with Debian 12's cuda.h; they need the NVIDIA driver's libcuda.so.1, a
# cuBLAS of CUDA 11, 12 or 13, and glibc 2.34 or later), after checking
# what they need, one PASS or FAIL line each:
#
#   machine  nvidia-smi lists the GPU;
#   driver   the libcuda.so.1 the loader will use is the NVIDIA driver, not
#            the toolkit's link stub (also looked for in /usr/local/nvidia,
#            which is then added to LD_LIBRARY_PATH);
#   cuBLAS   the cuBLAS the Go loader will try first, found as it looks
#            (scripts/lib/cublas.sh: $GOKERAS_CUBLAS, the loader's path,
#            /usr/local/cuda*, python3's site-packages);
#
# then the parts:
#
#   tests      the device/cuda tests (cuda.test, run in device/cuda as go
#              test would): kernels against the CPU ops, Place/Copy round
#              trips, the out-of-memory error, 50 training steps against
#              /CPU:0, Train's rules;
#   placement  examples/placement on /GPU:0;
#   train      train --synthetic --epochs 1 on /GPU:0 and then on /CPU:0,
#              with the same seed, timing both; then train --benchmark on
#              /GPU:0 with its steps pipelined (Fit's default there) and
#              step by step (GOKERAS_PIPELINE=0);
#   cnn        train --model cnn (Keras' cifar10_cnn: convolutions, pooling,
#              dropout) for 200 steps on /GPU:0 and on /CPU:0, same seed,
#              and its --benchmark on /GPU:0;
#   bench      bench/gpu.sh: gokeras against PyTorch eager on this GPU, the
#              MLP at batch 32 and 256 with SGD and Adam, TF32 off on both
#              (also written to $OUT/gpu-bench.txt);
#
# and two parts that run only when named, for a second call:
#
#   sanitize   compute-sanitizer on short training runs: memcheck on the
#              MLP and the CNN (every kernel's memory accesses), racecheck
#              on the MLP (shared memory in the block reductions);
#   profile    ncu's per-kernel summary (Speed Of Light section, clocks left
#              alone) of two training steps of the MLP after ten: which
#              kernels take the step's time, and how near each is to the
#              GPU's memory or compute ceiling.
#
# GOKERAS_REQUIRE_GPU=1 is set, so a machine where the driver sees no GPU
# fails instead of skipping. Everything goes to standard output, and also
# to $OUT/gpu-verify.log when $OUT is set (complete when the script ends).
#
# The programs may come as DIR/cuda-bin.tgz alone (scripts/build-cuda.sh
# --bin packs them: 26 MiB instead of 70); it is unpacked into DIR first.
#
# --dry-run checks, on the machine that built DIR, what it can without a
# GPU: the programs, what is to be carried (DIR/cuda-bin.tgz: under 64 MiB,
# holding the three programs as they are in DIR), the libraries each
# program links (libcuda.so.1 and glibc's, nothing else), that cuda.test
# starts and lists its tests, and prints the lookups the real run will do
# (driver, cuBLAS candidates) as they resolve here.
#
# Usage: scripts/gpu-verify.sh [--dry-run] [DIR [PART...]]
#   DIR    the binaries (default bin)
#   PART   tests, placement, train, cnn, bench, sanitize, profile: run
#          only these (default: the first five, about 15 minutes with the
#          CPU epoch of train; split them across calls where a call has a
#          time limit)
# Exit status: 0 when every check passed, 1 when one failed, 2 on bad usage.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/log.sh
. "$repo/scripts/lib/log.sh"
# shellcheck source=scripts/lib/driver.sh
. "$repo/scripts/lib/driver.sh"
# shellcheck source=scripts/lib/cublas.sh
. "$repo/scripts/lib/cublas.sh"

dry=""
case ${1:-} in
--dry-run)
	dry=1
	shift
	;;
-h | --help)
	sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
-*) echo "gpu-verify.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
bin=${1:-bin}
[ $# -gt 0 ] && shift
parts=" ${*:-tests placement train cnn bench} "
for p in $parts; do
	case $p in tests | placement | train | cnn | bench | sanitize | profile) ;; *) echo "gpu-verify.sh: unknown part $p (tests, placement, train, cnn, bench, sanitize, profile)" >&2; exit 2 ;; esac
done
want() { [[ $parts == *" $1 "* ]]; }
case $bin in /*) ;; *) bin=$repo/$bin ;; esac
programs=(cuda.test placement train)
pack=$bin/cuda-bin.tgz # what scripts/build-cuda.sh --bin packs them into

failed=()
# pass NAME [DETAIL], fail NAME DETAIL: one line each, the failures counted.
pass() { echo "PASS $1${2:+: $2}"; }
fail() {
	echo "FAIL $1: $2"
	failed+=("$1")
}
finish() {
	echo
	if [ ${#failed[@]} -gt 0 ]; then
		local list
		printf -v list '%s, ' "${failed[@]}"
		echo "gpu-verify.sh: FAILED: ${list%, }"
		exit 1
	fi
	echo "gpu-verify.sh: all passed"
	exit 0
}

# needed FILE prints the shared libraries FILE links, one a line.
needed() {
	if command -v readelf >/dev/null; then
		readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
	else
		objdump -p "$1" 2>/dev/null | awk '$1 == "NEEDED" { print $2 }'
	fi
}

dry_run() {
	echo "=== gpu-verify.sh --dry-run $bin: what can be checked without a GPU"
	local f missing=0
	for f in "${programs[@]}"; do
		if [ -x "$bin/$f" ]; then
			pass "program $f" "$bin/$f"
		else
			fail "program $f" "$bin/$f is missing: build the programs with scripts/build-cuda.sh --bin ${bin#"$repo"/}"
			missing=1
		fi
	done
	if [ -d "$bin" ]; then
		echo "contents of $bin:"
		(cd "$bin" && find . -type f -printf '  %9s  %P\n' | sort -k2)
	fi
	[ "$missing" = 0 ] || finish

	# What travels to the GPU machine: the pack, else the programs.
	local bytes limit=$((64 << 20)) raw
	raw=$(cd "$bin" && du -cb "${programs[@]}" | awk 'END { print $1 }')
	if [ -f "$pack" ]; then
		bytes=$(stat -c %s "$pack")
		if [ "$bytes" -lt "$limit" ]; then
			pass carry "${pack#"$repo"/} is $((bytes >> 20)) MiB, under the 64 MiB a GPU run can carry (the programs: $((raw >> 20)) MiB); carry that file alone"
		else
			fail carry "${pack#"$repo"/} is $((bytes >> 20)) MiB, over the 64 MiB a GPU run can carry"
		fi
		local listing
		listing=$(tar -tzf "$pack" | sort | paste -sd ' ' -)
		if [ "$listing" = "${programs[*]}" ]; then
			pass "pack contents" "$listing"
		else
			fail "pack contents" "${pack##*/} holds '$listing', want '${programs[*]}': rerun scripts/build-cuda.sh --bin ${bin#"$repo"/}"
		fi
		for f in "${programs[@]}"; do
			if tar -xzOf "$pack" "$f" 2>/dev/null | cmp -s - "$bin/$f"; then
				pass "pack has $f" "the same bytes as $bin/$f"
			else
				fail "pack has $f" "${pack##*/} does not hold this $bin/$f: rerun scripts/build-cuda.sh --bin ${bin#"$repo"/}"
			fi
		done
	elif [ "$raw" -lt "$limit" ]; then
		pass carry "the programs are $((raw >> 20)) MiB, under the 64 MiB a GPU run can carry (no ${pack##*/})"
	else
		fail carry "the programs are $((raw >> 20)) MiB, over the 64 MiB a GPU run can carry, and there is no ${pack##*/}: scripts/build-cuda.sh --bin ${bin#"$repo"/} packs them (about a third of the size); carry that"
	fi

	local libs bad glibc allowed='^(libcuda\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libresolv\.so\.2|ld-linux-x86-64\.so\.2)$'
	for f in "${programs[@]}"; do
		libs=$(needed "$bin/$f")
		bad=$(grep -Ev "$allowed" <<<"$libs" | paste -sd ' ' -)
		glibc=$(objdump -T "$bin/$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -n 1 | sed 's/GLIBC_//')
		libs=$(paste -sd ' ' - <<<"$libs")
		if [[ " $libs " != *" libcuda.so.1 "* ]]; then
			fail "libraries of $f" "it does not link libcuda.so.1 ($libs): it was built without -tags cudavm; rebuild with scripts/build-cuda.sh --bin"
		elif [ -n "$bad" ]; then
			fail "libraries of $f" "it links $bad besides libcuda.so.1 and glibc: a GPU machine may not have them (cuBLAS must be opened at run time, not linked)"
		else
			pass "libraries of $f" "$libs (glibc ${glibc:-?} or later)"
		fi
	done

	# cuda.test starts here too: without a GPU it lists its tests and exits.
	local out n
	if out=$(cd "$repo/device/cuda" && env -u GOKERAS_REQUIRE_GPU "$bin/cuda.test" -test.list '.*' 2>&1); then
		n=$(grep -c '^Test' <<<"$out")
		if [ "$n" -gt 0 ]; then
			pass cuda.test "it starts here and lists $n tests"
		else
			fail cuda.test "it started but listed no tests:"$'\n'"$out"
		fi
	elif ! driver_find >/dev/null; then
		echo "SKIP cuda.test: it cannot start here without a libcuda.so.1 (no NVIDIA driver library on this machine)"
	else
		fail cuda.test "it does not start here:"$'\n'"$out"
	fi

	echo
	echo "=== lookups the run will do (as they resolve on this machine, not on the GPU machine):"
	driver_find || true
	echo "cuBLAS candidates, in the Go loader's order (it keeps the first that loads and creates a handle):"
	local c i=0
	while IFS= read -r c; do
		i=$((i + 1))
		echo "  $i. ${c%%$'\t'*} (${c#*$'\t'})"
	done < <(cublas_candidates)
	[ "$i" -gt 0 ] || echo "  none here; looked in $cublas_where"
	finish
}

if [ -n "$dry" ]; then
	dry_run
fi

if [ -n "${OUT:-}" ]; then
	log_to "$OUT/gpu-verify.log"
fi
# Unpack the programs carried as DIR/cuda-bin.tgz (-m: they are then newer
# than it, and the next run does not unpack again).
if [ -f "$pack" ]; then
	for f in "${programs[@]}"; do
		if [ ! -x "$bin/$f" ] || [ "$pack" -nt "$bin/$f" ]; then
			echo "gpu-verify.sh: unpacking $pack"
			tar -C "$bin" -xzmf "$pack" || exit 2
			break
		fi
	done
fi
for f in "${programs[@]}"; do
	if [ ! -x "$bin/$f" ]; then
		echo "gpu-verify.sh: $bin/$f is missing: build the binaries with scripts/build-cuda.sh --bin ${bin#"$repo"/} and copy them here" >&2
		exit 2
	fi
done
export GOKERAS_REQUIRE_GPU=1

run() {
	local name=$1 status
	shift
	echo
	echo "=== $name: $*"
	local start=$SECONDS
	"$@"
	status=$?
	if [ "$status" = 0 ]; then
		pass "$name" "$((SECONDS - start))s"
	else
		fail "$name" "exit status $status ($((SECONDS - start))s)"
	fi
}

echo "=== gpu-verify.sh $bin${parts% }, $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n)"
if ! command -v nvidia-smi >/dev/null; then
	fail machine "nvidia-smi not found: install the NVIDIA driver, or run on a machine with an NVIDIA GPU"
elif out=$(nvidia-smi --query-gpu=name,memory.total,compute_cap,driver_version --format=csv 2>&1); then
	echo "$out"
	pass machine "$(sed -n 2p <<<"$out")"
else
	status=$?
	echo "$out"
	fail machine "nvidia-smi failed (exit status $status)"
fi
# In this shell, not $(...): driver_find may extend LD_LIBRARY_PATH.
if driver_find; then
	pass driver "$DRIVER_LIB"
else
	fail driver "no usable libcuda.so.1 (above)"
fi
if cublas_find; then
	pass cuBLAS "$CUBLAS_LIB"
else
	fail cuBLAS "none found (above)"
fi

want tests && run "device/cuda tests" bash -c "cd '$repo/device/cuda' && '$bin/cuda.test' -test.v -test.timeout 9m"
want placement && run "examples/placement" "$bin/placement" --device=/GPU:0
if want train; then
	run "train on /GPU:0" "$bin/train" --device=/GPU:0 --epochs 1 --synthetic --seed 1 --verbose 2
	run "train on /CPU:0" "$bin/train" --device=/CPU:0 --epochs 1 --synthetic --seed 1 --verbose 2
	run "train --benchmark on /GPU:0, steps pipelined" "$bin/train" --device=/GPU:0 --benchmark --benchmark-steps 200 --seed 1
	run "train --benchmark on /GPU:0, step by step" env GOKERAS_PIPELINE=0 "$bin/train" --device=/GPU:0 --benchmark --benchmark-steps 200 --seed 1
fi
if want cnn; then
	run "train --model cnn on /GPU:0" "$bin/train" --model cnn --device=/GPU:0 --epochs 1 --steps-per-epoch 200 --synthetic --seed 1 --verbose 2
	run "train --model cnn on /CPU:0" "$bin/train" --model cnn --device=/CPU:0 --epochs 1 --steps-per-epoch 200 --synthetic --seed 1 --verbose 2
	run "train --model cnn --benchmark on /GPU:0" "$bin/train" --model cnn --device=/GPU:0 --benchmark --seed 1
fi
# Last: gokeras against PyTorch eager on this GPU, TF32 off on both.
want bench && run "bench/gpu.sh: gokeras vs PyTorch eager, batch 32 and 256, SGD and Adam" \
	env DEVICES=cuda BATCH_SIZES=32,256 OPTIMIZERS=sgd,adam "$repo/bench/gpu.sh" "$bin"

# cuda_tool NAME prints the path of a CUDA tool: on the PATH, else in a
# CUDA toolkit's bin; nothing when there is none.
cuda_tool() {
	local t
	if t=$(command -v "$1"); then
		echo "$t"
		return
	fi
	for t in /usr/local/cuda/bin/"$1" /usr/local/cuda-*/bin/"$1" /opt/nvidia/*/"$1"; do
		if [ -x "$t" ]; then
			echo "$t"
			return
		fi
	done
}
if want sanitize; then
	if cs=$(cuda_tool compute-sanitizer) && [ -n "$cs" ]; then
		short=(--epochs 1 --synthetic --seed 1 --verbose 2)
		run "compute-sanitizer memcheck, train on /GPU:0" "$cs" --tool memcheck --error-exitcode 1 "$bin/train" --device=/GPU:0 --steps-per-epoch 20 "${short[@]}"
		run "compute-sanitizer memcheck, train --model cnn on /GPU:0" "$cs" --tool memcheck --error-exitcode 1 "$bin/train" --model cnn --device=/GPU:0 --steps-per-epoch 5 "${short[@]}"
		run "compute-sanitizer racecheck, train on /GPU:0" "$cs" --tool racecheck --error-exitcode 1 "$bin/train" --device=/GPU:0 --steps-per-epoch 5 "${short[@]}"
	else
		echo "SKIP sanitize: compute-sanitizer is neither on the PATH nor in a CUDA toolkit's bin"
	fi
fi
if want profile; then
	if ncu=$(cuda_tool ncu) && [ -n "$ncu" ]; then
		# Ten warm-up steps of about 25 launches each, then two steps.
		run "ncu: per-kernel summary of two MLP training steps on /GPU:0" "$ncu" --clock-control none --section SpeedOfLight \
			--launch-skip 250 --launch-count 50 --print-summary per-kernel \
			"$bin/train" --device=/GPU:0 --benchmark --benchmark-warmup 10 --benchmark-steps 2 --seed 1
	else
		echo "SKIP profile: ncu is neither on the PATH nor in a CUDA toolkit's bin"
	fi
fi
finish
