#!/usr/bin/env bash
# record.sh — runs a command and keeps its output under bench/results/, with
# a header that says what it ran on, so that a figure quoted in the README or
# docs/ can name the file it comes from.
#
# Usage: bench/record.sh NAME -- COMMAND [ARGS...]
#        bench/record.sh --header NAME -- COMMAND [ARGS...]   (prints the header only, runs nothing)
#
#   bench/record.sh matmul -- go run ./examples/matmul
#   bench/record.sh train-sample -- bench/train.sh --device=/CPU:0 --synthetic --epochs 2
#   bench/record.sh nn-bench -- go test -run XXX -bench OptimizerStep -benchmem ./nn
#
# Writes bench/results/NAME-YYYY-MM-DD.txt (the date in UTC; NAME-YYYY-MM-DD-2.txt
# and so on when that file exists) and shows the output as it runs. The header
# lines start with "# ":
#   date and time (UTC); the commit (git rev-parse --short HEAD) and whether the
#   tree has changes not committed, naming the files; the command, quoted so it
#   can be pasted back into a shell; the CPU model, its family and model numbers
#   (with the AMD Zen generation they mean), the CPU flags that decide which
#   kernels run (avx2, fma, avx512f, avx512_bf16, ...: present and absent), the
#   cores and the memory; the OS; what computes gokeras' matrix products (the
#   "BLAS:" line train prints, from bench/blasline) and the variables that steer
#   it; the Go version; PyTorch's and numpy's versions (the python3 in $PYTHON,
#   default /usr/bin/python3) when the command runs PyTorch (it names torch,
#   python or one of the bench scripts that run PyTorch, or TORCH=1); the load
#   average before and after, which says whether the machine was quiet.
# The command's standard output and error follow, then its exit status and how
# long it ran. record.sh exits with the command's status. A run that fails keeps
# its file, which says so; delete it rather than cite it.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() {
	echo "usage: bench/record.sh NAME -- COMMAND [ARGS...]   (NAME: letters, digits, . _ -)" >&2
	exit 2
}
header_only=
if [ "${1:-}" = --header ]; then
	header_only=1
	shift
fi
[ $# -ge 3 ] && [ "$2" = -- ] || usage
name=$1
shift 2
[[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || usage
cd "$repo"

day=$(date -u +%Y-%m-%d)
if [ -n "$header_only" ]; then
	out=/dev/stdout
else
	mkdir -p bench/results
	out=bench/results/$name-$day.txt
	n=2
	while [ -e "$out" ]; do
		out=bench/results/$name-$day-$n.txt
		n=$((n + 1))
	done
fi

# The command as a shell would take it back.
cmdline=$(printf '%q ' "$@")
cmdline=${cmdline% }

cpuinfo() { # the first value of a /proc/cpuinfo field
	sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo 2>/dev/null | head -n 1
}

cpu_line() {
	local model family cpumodel stepping gen=""
	model=$(cpuinfo 'model name')
	family=$(cpuinfo 'cpu family')
	cpumodel=$(cpuinfo 'model')
	stepping=$(cpuinfo 'stepping')
	if [ -z "$model" ]; then
		echo "unknown ($(uname -m))"
		return
	fi
	case $(cpuinfo vendor_id) in
	AuthenticAMD)
		case $family in
		23) gen="Zen, Zen+ or Zen 2" ;;
		25)
			if [ "$cpumodel" -ge 16 ] && [ "$cpumodel" -le 31 ] || [ "$cpumodel" -ge 96 ] && [ "$cpumodel" -le 127 ] ||
				[ "$cpumodel" -ge 160 ] && [ "$cpumodel" -le 175 ]; then
				gen="Zen 4"
			else
				gen="Zen 3"
			fi
			;;
		26) gen="Zen 5" ;;
		esac
		;;
	esac
	echo "$model (family $family, model $cpumodel, stepping $stepping${gen:+: $gen})"
}

flags_line() {
	local have want present="" absent=""
	have=" $(cpuinfo flags) "
	for want in sse4_2 avx avx2 fma f16c avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni avx512_bf16 avx512ifma avx512vbmi amx_tile amx_bf16; do
		case $have in
		*" $want "*) present+=" $want" ;;
		*) absent+=" $want" ;;
		esac
	done
	echo "present:${present:- none}; absent:${absent:- none}"
}

blas_line() {
	local line
	if command -v go >/dev/null && line=$(go run ./bench/blasline 2>&1); then
		echo "${line#BLAS: }"
	else
		echo "unknown (go run ./bench/blasline failed or no Go here)"
	fi
}

env_line() {
	local v s=""
	for v in GOKERAS_BLAS GOKERAS_CPU_KERNELS GOKERAS_PIPELINE GOKERAS_REDUCE_OVERLAP GOMAXPROCS OPENBLAS_CORETYPE OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS OMP_NUM_THREADS; do
		if [ -n "${!v+x}" ]; then s+=" $v=${!v}"; fi
	done
	s=${s# }
	echo "${s:-none of GOKERAS_BLAS, GOMAXPROCS, OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE, OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and the like set}"
}

commit_line() {
	local head changed
	if ! head=$(git rev-parse --short HEAD 2>/dev/null); then
		echo "unknown (not a git checkout)"
		return
	fi
	changed=$(git status --porcelain --untracked-files=no | awk '{print $NF}' | tr '\n' ' ')
	if [ -n "$changed" ]; then
		echo "$head, with changes not committed to: ${changed% }"
	else
		echo "$head (no changes to tracked files)"
	fi
}

runs_torch() {
	[ -n "${TORCH:-}" ] && return 0
	case " $cmdline " in
	*torch* | *python* | *bench/run.sh* | *bench/gpu.sh* | *compare.py* | *parity*) return 0 ;;
	esac
	return 1
}

torch_line() {
	local py=${PYTHON:-/usr/bin/python3} v
	if v=$("$py" -c 'import torch, numpy; print(f"PyTorch {torch.__version__}, numpy {numpy.__version__}")' 2>/dev/null); then
		echo "$v ($py, $("$py" -c 'import platform; print("Python", platform.python_version())'))"
	else
		echo "not importable from $py"
	fi
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }

mem=$(awk '/^MemTotal:/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo 2>/dev/null || echo unknown)
os=$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || echo unknown)
{
	echo "# bench/record.sh $name"
	echo "# date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "# commit: $(commit_line)"
	echo "# command: $cmdline"
	echo "# CPU: $(cpu_line), $(nproc) cores available, $mem of memory"
	echo "# CPU flags: $(flags_line)"
	echo "# OS: $os, Linux $(uname -r) $(uname -m)"
	echo "# gokeras kernel path (train's BLAS line): $(blas_line)"
	echo "# environment: $(env_line)"
	echo "# Go: $(command -v go >/dev/null && go version || echo 'not installed')"
	if runs_torch; then echo "# PyTorch: $(torch_line)"; fi
	echo "# load average (1, 5, 15 min) before: $(loadavg)"
	echo
} >"$out"
if [ -n "$header_only" ]; then exit 0; fi

echo "record.sh: writing $out" >&2
start=$(date +%s)
set +e
"$@" 2>&1 | tee -a "$out"
status=${PIPESTATUS[0]}
set -e
{
	echo
	echo "# exit status: $status; ran $(($(date +%s) - start)) s; load average after: $(loadavg)"
} >>"$out"
if [ "$status" -ne 0 ]; then
	echo "record.sh: the command failed (status $status); its output is in $out: delete it rather than cite it" >&2
else
	echo "record.sh: wrote $out" >&2
fi
exit "$status"
