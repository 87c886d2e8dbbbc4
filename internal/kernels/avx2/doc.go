// Package avx2 computes the float32 matrix products of dense-layer training
// with AVX2+FMA kernels, for x86 CPUs without AVX-512 (package avx512 has
// the kernels for those with it). The design is avx512's, narrowed to the
// 16 YMM registers: pack only the small operand (the batch), stream the
// weights from memory once, and hold a tile of the result in registers:
//
//   - forward, c = a·b: a tile of 4 batch rows × 24 outputs (12
//     accumulators, a row of b in 3 registers, a broadcast of a);
//   - weight gradient, c = aᵀ·b, where c is the weights themselves when the
//     caller folds the optimizer step in (alpha = -lr, beta = 1): a tile of
//     4 weight rows × 24 columns, read and written once;
//   - input gradient, c = a·bᵀ: 6 weight rows × 16 batch columns, dot
//     products along the weight rows.
//
// Partial tiles at the edges go through scratch tiles, so the kernels
// never read or write outside the slices. The work is split over
// GOMAXPROCS goroutines in chunks handed out as they finish.
//
// Beside the products it has elementwise kernels, each with Go code for
// machines without AVX2: ReLU's mask, sums and products of slices, max
// pooling's steps, and the recurrent gates' sigmoid and tanh with their
// gradients (gates.go, whose formulas package avx512 runs on 16 lanes).
//
// Available reports whether the kernels run on this machine (amd64 with
// AVX2 and FMA). Package blas decides when they are used and sends what
// they do not compute (ErrUnsupported) to a BLAS library: programs
// multiply through blas.Default, never through this package directly.
package avx2
