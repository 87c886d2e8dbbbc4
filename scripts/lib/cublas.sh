# shellcheck shell=bash
# cublas.sh — where gokeras finds cuBLAS, for the scripts (sourced).
#
# The same places, in the same order, as the Go loader
# (device/cuda/blaslookup.go), which opens them at run time:
#
#   1. $GOKERAS_CUBLAS, and nothing else when it is set;
#   2. libcublas.so.13, then .12, then .11 on the loader's path: each in
#      LD_LIBRARY_PATH, ldconfig -p, then the loader's default directories;
#   3. /usr/local/cuda*/targets/x86_64-linux/lib and /usr/local/cuda*/lib64,
#      newest soname first;
#   4. python3's site-packages (nvidia/cublas/lib or nvidia/cu13/lib, where
#      pip's nvidia-cublas wheels, and so torch, put it; $PYTHON if set).
#
# The loader keeps the first candidate that loads and creates a handle; a
# script cannot create one, so cublas_find takes the first that exists.
# libcublasLt is expected beside the library.
#
#   cublas_candidates   prints "PATH<TAB>WHERE" for each candidate that exists
#   cublas_find         sets CUBLAS_LIB and CUBLAS_WHERE to the first, prints
#                       "cuBLAS: PATH (WHERE)"; with none, prints where it
#                       looked and returns 1

# cublas_python_script is blasSitePackagesScript of device/cuda/blaslookup.go
# (its tests check the two are the same text).
cublas_python_script='import glob, os, re, site, sys
dirs = list(getattr(site, "getsitepackages", lambda: [])()) + [site.getusersitepackages()] + sys.path
found = {}
for d in dirs:
    for f in glob.glob(os.path.join(d or ".", "nvidia", "cu*", "lib", "libcublas.so.*")):
        m = re.search(r"/libcublas[.]so[.]([0-9]+)$", f)
        if m:
            found.setdefault(os.path.abspath(f), int(m.group(1)))
for f, v in sorted(found.items(), key=lambda kv: -kv[1]):
    print(f)'

cublas_where="\$GOKERAS_CUBLAS; libcublas.so.13, .12, .11 in LD_LIBRARY_PATH, ldconfig -p and the loader's default directories; /usr/local/cuda*/targets/x86_64-linux/lib and /usr/local/cuda*/lib64; ${PYTHON:-python3}'s site-packages (nvidia/cublas/lib, nvidia/cu13/lib)"

# cublas_ldconfig prints the loader's cache (ldconfig -p), or nothing; it
# does not fail (ldconfig is in /sbin, often not on a user's PATH).
cublas_ldconfig() {
	local l
	l=$(command -v ldconfig || echo /sbin/ldconfig)
	"$l" -p 2>/dev/null || true
}

cublas_candidates() {
	if [ -n "${GOKERAS_CUBLAS:-}" ]; then
		if [ -e "$GOKERAS_CUBLAS" ]; then
			printf '%s\t%s\n' "$GOKERAS_CUBLAS" "\$GOKERAS_CUBLAS"
		fi
		return 0
	fi
	local v d f py=${PYTHON:-python3}
	local -a ldpath
	IFS=: read -r -a ldpath <<<"${LD_LIBRARY_PATH:-}"
	{
		for v in 13 12 11; do
			for d in "${ldpath[@]}"; do
				if [ -n "$d" ] && [ -e "$d/libcublas.so.$v" ]; then
					printf '%s\t%s\n' "$d/libcublas.so.$v" "LD_LIBRARY_PATH"
				fi
			done
			# awk reads all of ldconfig's output: no early close, no SIGPIPE.
			cublas_ldconfig | awk -v n="libcublas.so.$v" '$1 == n && /x86-64/ { print $NF "\tldconfig -p" }'
			for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib; do
				if [ -e "$d/libcublas.so.$v" ]; then
					printf '%s\t%s\n' "$d/libcublas.so.$v" "the loader's default directories"
				fi
			done
		done
		for f in /usr/local/cuda*/targets/x86_64-linux/lib/libcublas.so.1[0-9] /usr/local/cuda*/lib64/libcublas.so.1[0-9]; do
			if [ -e "$f" ]; then
				printf '%s\t%s\n' "${f##*.so.}" "$f"
			fi
		done | sort -t "$(printf '\t')" -k1,1nr -k2,2r | awk -F '\t' '{ print $2 "\ta CUDA toolkit" }'
		if command -v "$py" >/dev/null 2>&1; then
			{ "$py" -c "$cublas_python_script" 2>/dev/null || true; } | awk -v w="$py's site-packages" '{ print $0 "\t" w }'
		fi
	} | {
		# one line per file, however many ways lead to it
		local -A seen=()
		local path where real
		while IFS=$'\t' read -r path where; do
			real=$(readlink -f "$path" || echo "$path")
			if [ -z "${seen[$real]:-}" ]; then
				seen[$real]=1
				printf '%s\t%s\n' "$path" "$where"
			fi
		done
	}
}

cublas_find() {
	CUBLAS_LIB=""
	CUBLAS_WHERE=""
	local first
	first=$(cublas_candidates | awk 'NR == 1')
	if [ -z "$first" ]; then
		if [ -n "${GOKERAS_CUBLAS:-}" ]; then
			echo "cuBLAS: \$GOKERAS_CUBLAS=$GOKERAS_CUBLAS does not exist: set it to a libcublas.so.13, .12 or .11, or unset it to search"
		else
			echo "cuBLAS: none found (looked in $cublas_where): pip install nvidia-cublas-cu12 (or the CUDA toolkit), or set \$GOKERAS_CUBLAS to the library's path"
		fi
		return 1
	fi
	CUBLAS_LIB=${first%%$'\t'*}
	CUBLAS_WHERE=${first#*$'\t'}
	echo "cuBLAS: $CUBLAS_LIB ($CUBLAS_WHERE)"
}
