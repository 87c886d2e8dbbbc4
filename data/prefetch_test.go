package data

import (
	"runtime"
	"slices"
	"testing"
)

// threeClasses is 70 samples of 4 features in three classes, one-hot.
func threeClasses(t testing.TB) Dataset {
	t.Helper()
	rows := make([][]float32, 70)
	classes := make([]int, len(rows))
	for i := range rows {
		c := i % 3
		rows[i] = []float32{float32(c), float32(i%7) / 7, float32(2 - c), float32(i%5) / 5}
		classes[i] = c
	}
	ds, err := SliceData(Rows(rows), OneHot(classes, 3))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// Used out of plan, by hand or by Evaluate and Predict, the wrapper gathers
// what the data gathers.
func TestPrefetchOutOfPlanGathersAsTheData(t *testing.T) {
	ds := threeClasses(t)
	p := Prefetch(ds).(*prefetched)
	gather := func(d Dataset, idx []int) ([]float32, []float32) {
		x, y := make([]float32, 4*len(idx)), make([]float32, 3*len(idx))
		if err := d.GatherInputs(idx, x); err != nil {
			t.Fatal(err)
		}
		if err := d.GatherLabels(idx, y); err != nil {
			t.Fatal(err)
		}
		return x, y
	}
	order := []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	for _, tc := range []struct {
		name string
		idx  [][]int // gathered in turn after planning order in batches of 4
	}{
		{"as planned", [][]int{{9, 8, 7, 6}, {5, 4, 3, 2}, {1, 0}, {1, 0}}},
		{"another batch first", [][]int{{5, 4, 3, 2}, {9, 8, 7, 6}}},
		{"the plan's batch after a stray one", [][]int{{9, 8, 7, 6}, {0}, {5, 4, 3, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.PlanBatches(order, 4, 0, 3)
			for _, idx := range tc.idx {
				gx, gy := gather(p, idx)
				wx, wy := gather(ds, idx)
				if !slices.Equal(gx, wx) || !slices.Equal(gy, wy) {
					t.Errorf("batch %v: gathered %v %v, want %v %v", idx, gx, gy, wx, wy)
				}
			}
			// Labels asked for without their inputs end the plan too.
			y := make([]float32, 3)
			if err := p.GatherLabels([]int{2}, y); err != nil || !slices.Equal(y, []float32{0, 0, 1}) {
				t.Errorf("GatherLabels([2]) = %v, %v", y, err)
			}
			p.StopBatches()
			if p.live.Load() != 0 || p.run != nil {
				t.Error("the plan outlived StopBatches")
			}
		})
	}
	if Prefetch(nil) != nil {
		t.Error("Prefetch(nil) is not nil")
	}
}

// goexiter calls runtime.Goexit when asked for sample 5, as t.FailNow in
// a test's data would.
type goexiter struct{ Dataset }

func (g goexiter) GatherInputs(idx []int, dst []float32) error {
	if slices.Contains(idx, 5) {
		runtime.Goexit()
	}
	return g.Dataset.GatherInputs(idx, dst)
}

// A prefetching goroutine that ends without its batch does not leave Fit
// waiting for it: the batch is gathered where Fit asked for it.
func TestPrefetchSurvivesGoexitInTheData(t *testing.T) {
	p := Prefetch(goexiter{threeClasses(t)}).(*prefetched)
	p.PlanBatches([]int{0, 1, 2, 3, 4, 5, 6, 7}, 4, 0, 2)
	x := make([]float32, 16)
	if err := p.GatherInputs([]int{0, 1, 2, 3}, x); err != nil {
		t.Fatal(err)
	}
	exited := make(chan bool)
	go func() {
		defer close(exited)
		_ = p.GatherInputs([]int{4, 5, 6, 7}, x)
		exited <- true // not reached: the data ends this goroutine too
	}()
	if returned := <-exited; returned {
		t.Error("GatherInputs returned from a batch whose data calls Goexit")
	}
	p.StopBatches()
	if p.live.Load() != 0 {
		t.Error("the prefetching goroutine is still counted")
	}
}
