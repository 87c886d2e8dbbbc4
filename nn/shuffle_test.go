package nn

import (
	"slices"
	"testing"
)

func TestShuffleOrderDependsOnSeedAndEpochOnly(t *testing.T) {
	order := func(seed uint64, epoch int) []int {
		o := make([]int, 50)
		for i := range o {
			o[i] = 49 - i // whatever the previous epoch left
		}
		shuffleOrder(o, true, seed, epoch)
		return o
	}
	a := order(1, 3)
	if !slices.Equal(a, order(1, 3)) {
		t.Error("the same (seed, epoch) gave two orders")
	}
	sorted := slices.Sorted(slices.Values(a))
	for i, v := range sorted {
		if v != i {
			t.Fatalf("not a permutation: %v", a)
		}
	}
	for _, other := range [][]int{order(1, 4), order(2, 3), order(1, 2)} {
		if slices.Equal(a, other) {
			t.Error("another seed or epoch gave the same order")
		}
	}
	plain := make([]int, 5)
	shuffleOrder(plain, false, 1, 3)
	if !slices.Equal(plain, []int{0, 1, 2, 3, 4}) {
		t.Errorf("without shuffling: %v", plain)
	}
}
