package collective

import (
	"errors"
	"slices"
	"strings"
	"sync"
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

// job is an in-process job of size ranks, one goroutine each: its
// collectives meet at a barrier, where the root's bytes or the sum of
// every rank's buffer are handed to all.
type job struct {
	size   int
	mu     sync.Mutex
	cond   *sync.Cond
	gen    int
	count  int
	bufs   [][]float32
	bytes  []byte
	result []float32
}

func newJob(size int) *job {
	j := &job{size: size, bufs: make([][]float32, size)}
	j.cond = sync.NewCond(&j.mu)
	return j
}

// meet runs at the barrier: arrive stores this rank's part, and the last
// rank to arrive runs last; then every rank reads.
func (j *job) meet(arrive, last func()) {
	j.mu.Lock()
	defer j.mu.Unlock()
	arrive()
	j.count++
	gen := j.gen
	if j.count == j.size {
		last()
		j.count, j.gen = 0, j.gen+1
		j.cond.Broadcast()
		return
	}
	for gen == j.gen {
		j.cond.Wait()
	}
}

type rankComm struct {
	j    *job
	rank int
}

func (c rankComm) Rank() int { return c.rank }
func (c rankComm) Size() int { return c.j.size }

func (c rankComm) AllReduceSum(buf []float32) error {
	c.j.meet(func() { c.j.bufs[c.rank] = slices.Clone(buf) }, func() {
		c.j.result = make([]float32, len(buf))
		for _, b := range c.j.bufs {
			for i, v := range b {
				c.j.result[i] += v
			}
		}
	})
	c.j.mu.Lock()
	copy(buf, c.j.result)
	c.j.mu.Unlock()
	c.j.meet(func() {}, func() {}) // nobody overwrites result before all have read it
	return nil
}

func (c rankComm) BcastBytes(buf []byte, root int) error {
	c.j.meet(func() {
		if c.rank == root {
			c.j.bytes = slices.Clone(buf)
		}
	}, func() {})
	c.j.mu.Lock()
	copy(buf, c.j.bytes)
	c.j.mu.Unlock()
	c.j.meet(func() {}, func() {})
	return nil
}

// Agree passes when every rank describes the job as rank 0 does, and
// otherwise fails on every rank: the ranks that differ name the first
// difference (a line changed, or missing at the end), the others name
// those ranks.
func TestAgree(t *testing.T) {
	same := []string{"a: 1", "b: 2"}
	for _, tc := range []struct {
		name  string
		descs [][]string
		want  []string // each rank's error, "" for none
	}{
		{"same", [][]string{same, same, same}, []string{"", "", ""}},
		{"a value", [][]string{same, {"a: 1", "b: 3"}, same}, []string{
			"ranks [1] do not run what rank 0 runs (their errors name the difference); fix",
			"rank 1 of 3 does not run what rank 0 runs: b: 3 here, 2 on rank 0; fix",
			"ranks [1] do not run what rank 0 runs (their errors name the difference); fix",
		}},
		{"a line fewer", [][]string{same, same, {"a: 1"}}, []string{
			"ranks [2] do not run",
			"ranks [2] do not run",
			"rank 2 of 3 does not run what rank 0 runs: b: (nothing) here, 2 on rank 0; fix",
		}},
		{"a line more", [][]string{same, {"a: 1", "b: 2", "c: 3"}, same}, []string{
			"ranks [1] do not run",
			"rank 1 of 3 does not run what rank 0 runs: c: 3 here, (nothing) on rank 0; fix",
			"ranks [1] do not run",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(len(tc.descs))
			errs := make([]error, j.size)
			var wg sync.WaitGroup
			for r := range j.size {
				wg.Go(func() { errs[r] = Agree(rankComm{j, r}, tc.descs[r], "fix") })
			}
			wg.Wait()
			for r, err := range errs {
				switch {
				case tc.want[r] == "" && err != nil:
					t.Errorf("rank %d: %v, want no error", r, err)
				case tc.want[r] != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want[r])):
					t.Errorf("rank %d: %v, want an error starting %q", r, err, tc.want[r])
				}
			}
		})
	}
}
