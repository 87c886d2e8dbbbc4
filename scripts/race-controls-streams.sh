#!/usr/bin/env bash
# race-controls-streams.sh — the control of the emulated GPU's race mode
# (GOKERAS_EMU_RACE, device/cuda/race_emu.go): a race between streams that
# the normal emulator hides must fail in race mode.
#
# The race: the data-parallel all-reduce runs on a second stream (comm),
# which waits by an event (gradsReady) for the gradients the machine's
# stream computed (StartReduceOnDevice in device/cuda/machine.go). With
# that wait removed, the normal emulator still runs the machine stream's
# work first, and every test passes; in race mode the all-reduce touches
# the gradients with nothing ordering it after the kernels that wrote
# them, which is reported whichever stream runs first.
#
# In a copy of COMMIT (git archive, default HEAD: the working tree is never
# touched), it removes that wait and runs (tags cudavm kernelemu)
# TestDataParallelWorldOfOneMatchesOneGPU of device/cuda, and, where
# mpirun is, TestMultiWorkerFitOnGPUMatchesOneProcess of distribute (two
# ranks): each must pass without race mode (the race is hidden there)
# and fail with GOKERAS_EMU_STREAM_RACE=seed (race mode for the streams
# alone; --var GOKERAS_EMU_RACE for the kernels' race mode too) for each
# seed, with a race naming the all-reduce. Exits 0 when the control
# behaves so, 1 otherwise.
#
# Usage: scripts/race-controls-streams.sh [--commit REV] [--seeds "1 2 3"] [--var NAME] [--keep]
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
commit=HEAD
seeds="1 2 3"
var=GOKERAS_EMU_STREAM_RACE
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --commit) commit=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --var) var=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--commit REV] [--seeds \"1 2 3\"] [--var NAME] [--keep]" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gokeras-race-control.XXXXXX")
if [ "$keep" = 0 ]; then
  trap 'rm -rf "$work"' EXIT
else
  echo "keeping $work"
fi
git -C "$repo" archive "$commit" | tar -x -C "$work"
cd "$work"

# The mutation: StartReduceOnDevice's comm.wait(gradsReady), gone.
file=device/cuda/machine.go
perl -0pi -e 's/\n\tif err := b\.comm\.wait\(b\.gradsReady\); err != nil \{\n\t\treturn err\n\t\}\n/\n/' "$file"
if grep -q 'b\.comm\.wait(b\.gradsReady)' "$file" || ! grep -q 'b\.stream\.record(b\.gradsReady)' "$file"; then
  echo "FAIL: the mutation no longer applies to $file: update this control" >&2
  exit 1
fi
echo "== mutation: $file without the all-reduce stream's wait for the gradients"
git -C "$repo" show "$commit:$file" | diff - "$file" || true

status=0
# control PACKAGE TEST: TEST passes without race mode and fails with a
# race naming the all-reduce with each seed.
control() {
  local pkg=$1 test=$2 out seed
  echo "== $pkg $test without race mode: the race is hidden, the test passes"
  if ! out=$(env -u GOKERAS_EMU_RACE -u GOKERAS_EMU_STREAM_RACE go test -tags 'cudavm kernelemu' -count=1 -run "^$test\$" "$pkg" 2>&1); then
    echo "$out" | tail -20
    echo "FAIL: $test failed without race mode: the control is not the race alone" >&2
    status=1
  fi
  for seed in $seeds; do
    echo "== $pkg $test with $var=$seed: the test must fail with the race"
    if out=$(env -u GOKERAS_EMU_RACE -u GOKERAS_EMU_STREAM_RACE "$var=$seed" go test -tags 'cudavm kernelemu' -count=1 -run "^$test\$" "$pkg" 2>&1); then
      echo "$out" | tail -20
      echo "FAIL: seed $seed: $test passed with the all-reduce unordered after the gradients" >&2
      status=1
    elif ! grep -q 'a race on .* the all-reduce (stream' <<<"$out"; then
      echo "$out" | tail -20
      echo "FAIL: seed $seed: $test failed, but not with the all-reduce's race" >&2
      status=1
    else
      grep -m1 -o 'emulated GPU: a race on.*' <<<"$out" | cut -c1-300
    fi
  done
}

# One replica on the emulated GPU, in this process.
control ./device/cuda TestDataParallelWorldOfOneMatchesOneGPU
# Two ranks under mpirun, each on its emulated /GPU:0 (the ranks inherit
# the race mode's variable); skipped without Open MPI unless
# GOKERAS_REQUIRE_MPI is set.
if command -v mpirun >/dev/null || [ -n "${GOKERAS_REQUIRE_MPI:-}" ]; then
  control ./distribute TestMultiWorkerFitOnGPUMatchesOneProcess
else
  echo "== no mpirun: the two-rank control is skipped"
fi
if [ "$status" = 0 ]; then
  echo "ok: race mode ($var) catches the all-reduce stream not waiting for the gradients (seeds $seeds)"
fi
exit "$status"
