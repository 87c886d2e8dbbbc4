# shellcheck shell=bash
# driver.sh — where the NVIDIA driver's libcuda.so.1 is (sourced).
#
#   driver_find   sets DRIVER_LIB to the libcuda.so.1 the loader will use and
#                 prints "driver: PATH (WHERE)"; a driver found only under
#                 /usr/local/nvidia (NVIDIA's container images) is added to
#                 LD_LIBRARY_PATH (exported) so the binaries find it. It
#                 returns 1, saying why and what to do, when there is none or
#                 when the first one is the CUDA toolkit's link stub (it
#                 only lets programs link: cuInit fails with
#                 CUDA_ERROR_STUB_LIBRARY).
#
# Looked in, in the loader's order: LD_LIBRARY_PATH, ldconfig -p, the
# loader's default directories, then /usr/local/nvidia/lib64 and
# /usr/local/nvidia/lib, and /usr/lib/wsl/lib (WSL).

# driver_ldconfig prints the loader's cache (ldconfig -p), or nothing; it
# does not fail (ldconfig is in /sbin, often not on a user's PATH).
driver_ldconfig() {
	local l
	l=$(command -v ldconfig || echo /sbin/ldconfig)
	"$l" -p 2>/dev/null || true
}

driver_candidates() {
	local d
	local -a ldpath
	IFS=: read -r -a ldpath <<<"${LD_LIBRARY_PATH:-}"
	for d in "${ldpath[@]}"; do
		if [ -n "$d" ] && [ -e "$d/libcuda.so.1" ]; then
			printf '%s\t%s\n' "$d/libcuda.so.1" "LD_LIBRARY_PATH"
		fi
	done
	driver_ldconfig | awk '$1 == "libcuda.so.1" && /x86-64/ { print $NF "\tldconfig -p" }'
	for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib; do
		if [ -e "$d/libcuda.so.1" ]; then
			printf '%s\t%s\n' "$d/libcuda.so.1" "the loader's default directories"
		fi
	done
	for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/wsl/lib; do
		if [ -e "$d/libcuda.so.1" ]; then
			printf '%s\t%s\n' "$d/libcuda.so.1" "$d (not on the loader's path)"
		fi
	done
}

# driver_is_stub FILE: whether FILE is a link stub (it lives in a stubs
# directory, as the toolkit's and scripts/install-cuda.sh's do).
driver_is_stub() {
	case $(readlink -f "$1" 2>/dev/null || echo "$1")/$1 in
	*/stubs/*) return 0 ;;
	esac
	return 1
}

driver_find() {
	DRIVER_LIB=""
	local first where
	first=$(driver_candidates | awk 'NR == 1')
	if [ -z "$first" ]; then
		echo "driver: no libcuda.so.1 (looked in LD_LIBRARY_PATH, ldconfig -p, /usr/lib/x86_64-linux-gnu, /usr/lib64, /usr/local/nvidia/lib64, /usr/local/nvidia/lib, /usr/lib/wsl/lib): install the NVIDIA driver, or run on a machine with an NVIDIA GPU"
		return 1
	fi
	DRIVER_LIB=${first%%$'\t'*}
	where=${first#*$'\t'}
	if driver_is_stub "$DRIVER_LIB"; then
		echo "driver: $DRIVER_LIB ($where) is the CUDA toolkit's link stub, not the NVIDIA driver: take its directory out of LD_LIBRARY_PATH and install the NVIDIA driver (cuInit would fail with CUDA_ERROR_STUB_LIBRARY)"
		return 1
	fi
	case $where in
	*"not on the loader's path"*)
		LD_LIBRARY_PATH=${DRIVER_LIB%/*}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		export LD_LIBRARY_PATH
		where="$where: added to LD_LIBRARY_PATH"
		;;
	esac
	echo "driver: $DRIVER_LIB ($where) -> $(readlink -f "$DRIVER_LIB")"
}
