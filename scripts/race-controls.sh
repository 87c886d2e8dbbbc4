#!/usr/bin/env bash
# race-controls.sh — the controls of the kernel emulator's race mode
# (GOKERAS_EMU_RACE, package device/cuda/kernels/emu):
#
#  1. no false positives: the package's tests pass in race mode with each
#     seed, as they do without it;
#  2. the mutation: in a copy of COMMIT (git archive, default HEAD: the
#     working tree is never touched) whose kernels.cu lacks the
#     __syncthreads after gk_zero_one_labels' `if (threadIdx.x == 0)
#     *flag = 1;` — a real race on a GPU, another thread's atomicMin(flag,
#     0) may come first — TestZeroOneLabels passes without race mode (the
#     fixed schedule runs thread 0 first) and fails with each seed, with a
#     race named in gk_zero_one_labels.
#
# Exits 0 when every control behaves so, 1 otherwise.
#
# Usage: scripts/race-controls.sh [--commit REV] [--seeds "1 2 3"] [--keep]
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
commit=HEAD
seeds="1 2 3"
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --commit) commit=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--commit REV] [--seeds \"1 2 3\"] [--keep]" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gokeras-kernel-race-control.XXXXXX")
if [ "$keep" = 0 ]; then
  trap 'rm -rf "$work"' EXIT
else
  echo "keeping $work"
fi
git -C "$repo" archive "$commit" | tar -x -C "$work"
cd "$work"

pkg=./device/cuda/kernels/emu
status=0

echo "== the package's tests, without race mode and with seeds $seeds"
for seed in 0 $seeds; do
  start=$(date +%s%N)
  if out=$(GOKERAS_EMU_RACE=$seed go test -tags kernelemu -count=1 "$pkg" 2>&1); then
    echo "   GOKERAS_EMU_RACE=$seed: pass ($(( ($(date +%s%N) - start) / 1000000 )) ms with the build; $(grep -o '[0-9.]*s$' <<<"$out"))"
  else
    echo "FAIL: GOKERAS_EMU_RACE=$seed: the unmodified tests fail" >&2
    echo "$out" | tail -30 >&2
    status=1
  fi
done

# The mutation: the barrier after thread 0's *flag = 1, gone.
file=device/cuda/kernels/kernels.cu
perl -0pi -e 's/(\tif \(threadIdx\.x == 0\) \*flag = 1;\n)\t__syncthreads\(\);\n/$1/' "$file"
if ! grep -q 'if (threadIdx.x == 0) \*flag = 1;' "$file" ||
  grep -A1 'if (threadIdx.x == 0) \*flag = 1;' "$file" | grep -q '__syncthreads'; then
  echo "FAIL: the mutation no longer applies to $file: update this control" >&2
  exit 1
fi
echo "== mutation: $file without gk_zero_one_labels' barrier"
git -C "$repo" show "$commit:$file" | diff - "$file" || true

test=TestZeroOneLabels
echo "== without race mode: the race is hidden, $test passes"
if ! out=$(GOKERAS_EMU_RACE=0 go test -tags kernelemu -count=1 -run "^$test\$" "$pkg" 2>&1); then
  echo "FAIL: $test fails without race mode: the control no longer shows a hidden race" >&2
  echo "$out" | tail -20 >&2
  status=1
fi
for seed in $seeds; do
  echo "== GOKERAS_EMU_RACE=$seed: $test must fail with a race in gk_zero_one_labels"
  if out=$(GOKERAS_EMU_RACE=$seed go test -tags kernelemu -count=1 -run "^$test\$" "$pkg" 2>&1); then
    echo "FAIL: seed $seed: $test passes without the barrier" >&2
    status=1
  elif ! grep -q 'kernel gk_zero_one_labels: a race on global memory' <<<"$out"; then
    echo "FAIL: seed $seed: $test fails, but not with the race:" >&2
    echo "$out" | tail -20 >&2
    status=1
  else
    grep -m1 'a race on' <<<"$out" | sed 's/^/   /'
  fi
done

if [ "$status" = 0 ]; then
  echo "ok: race mode passes the kernels as they are and fails them without the barrier"
fi
exit "$status"
