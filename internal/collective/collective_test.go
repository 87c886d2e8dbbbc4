package collective

import (
	"errors"
	"slices"
	"testing"
)

// TestRanksWhere runs a job of four ranks in one process: the all-reduce
// adds every rank's buffer, and each rank must see the ranks whose
// condition held.
func TestRanksWhere(t *testing.T) {
	const size = 4
	conds := []bool{false, true, false, true}
	bufs := make([][]float32, size)
	for r := range size {
		bufs[r] = make([]float32, size)
		if conds[r] {
			bufs[r][r] = 1
		}
	}
	total := make([]float32, size)
	for _, b := range bufs {
		for i, v := range b {
			total[i] += v
		}
	}
	for r := range size {
		sum := func(buf []float32) error {
			if !slices.Equal(buf, bufs[r]) {
				t.Errorf("rank %d contributed %v, want %v", r, buf, bufs[r])
			}
			copy(buf, total)
			return nil
		}
		got, err := RanksWhere(size, r, conds[r], sum)
		if err != nil || !slices.Equal(got, []int{1, 3}) {
			t.Errorf("rank %d: %v, %v; want [1 3]", r, got, err)
		}
	}
	want := errors.New("the all-reduce failed")
	if _, err := RanksWhere(size, 0, true, func([]float32) error { return want }); !errors.Is(err, want) {
		t.Errorf("a failed all-reduce: %v, want its error", err)
	}
}
