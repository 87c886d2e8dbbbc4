package matrix

import (
	"sync"
	"testing"
)

func TestParallelCoversEachIndexOnce(t *testing.T) {
	for _, tc := range []struct{ workers, n, minChunk int }{
		{1, 10, 1}, {2, 1, 1}, {2, 63, 16}, {2, 375, 4}, {3, 100, 2}, {4, 7, 3}, {2, 0, 1},
	} {
		var mu sync.Mutex
		seen := make([]int, tc.n)
		chunks := 0
		Parallel(tc.workers, tc.n, tc.minChunk, func(w, lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			if w < 0 || w >= max(1, tc.workers) {
				t.Errorf("worker index %d with %d workers", w, tc.workers)
			}
			if hi-lo < tc.minChunk && hi != tc.n {
				t.Errorf("%+v: chunk [%d, %d) is below the minimum and not the last", tc, lo, hi)
			}
			chunks++
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("%+v: index %d run %d times", tc, i, c)
			}
		}
	}
}
