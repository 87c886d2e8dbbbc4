#!/bin/sh
# conv-products-table.sh — the table of a BenchmarkConvProducts results file
# (bench/record.sh conv-products -- go test -run XXX -bench ConvProducts
# -count 3 -benchtime 20x ./internal/kernels/avx512): for each product, the
# best of its runs in GFLOP/s (wall clock) and in GFLOP per CPU-second
# (both threads' CPU time: what the product reaches per core while it runs,
# which time given to other work on a shared machine does not lower), for
# the tall AVX-512 kernels (avx512: what package blas runs; cached: the
# same with every store through the caches, where avx512 streams a large c
# past them; absent from files before the stream kernels), the wide
# AVX-512 kernels that computed these products before (wide) and the AVX2
# kernels (avx2).
#
#   bench/conv-products-table.sh bench/results/conv-products-2026-11-27.txt
set -eu
grep '^BenchmarkConvProducts/' "$1" | sed 's/^BenchmarkConvProducts\///' | awk '
{
	name = $1; sub(/-[0-9]+$/, "", name)
	impl = name; sub(/.*\//, "", impl)
	key = name; sub(/\/[^\/]*$/, "", key)
	for (i = 2; i < NF; i++) {
		if ($(i + 1) == "GFLOP/s" && $i > wall[key, impl]) wall[key, impl] = $i
		if ($(i + 1) == "GFLOP/cpu-s" && $i > cpu[key, impl]) cpu[key, impl] = $i
	}
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
}
END {
	printf "| product | tall (avx512) GFLOP/s | per CPU-s | cached stores GFLOP/s | per CPU-s | wide (before) GFLOP/s | per CPU-s | AVX2 GFLOP/s | per CPU-s |\n"
	printf "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
	for (j = 1; j <= n; j++) {
		k = order[j]
		printf "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", k, wall[k, "avx512"], cpu[k, "avx512"], wall[k, "cached"], cpu[k, "cached"], wall[k, "wide"], cpu[k, "wide"], wall[k, "avx2"], cpu[k, "avx2"]
	}
}'
