package avx512

import "math"

// Dropout computes a dropout of the units from 4·block on: y[i] =
// x[i]·scale where unit 4·block+i's random word is at least threshold,
// else 0 (the exact bits of that product, or +0), its word being word i%4
// of Philox4x32-10 (ops.Philox4x32) with counter (block+i/4, low and high
// words; step, low and high words) and key (low and high words). It
// computes whole groups of 64 units, as many as x and y hold and the
// counter's low word does not wrap within, and returns how many units it
// did: the caller computes the rest, and everything where the kernels are
// not Available (0).
func Dropout(x, y []float32, block, step, key uint64, threshold uint32, scale float32) int {
	if !haveKernels {
		return 0
	}
	groups := min(len(x), len(y)) / 64
	// 16 blocks a group, the low word of their counters one add apart.
	groups = min(groups, int((math.MaxUint32-uint64(uint32(block))+1)/16))
	if groups == 0 {
		return 0
	}
	dropoutPhilox(&x[0], &y[0], groups, block, step, key, threshold, scale)
	return 64 * groups
}
