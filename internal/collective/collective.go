// Package collective holds the small collective steps that gokeras'
// data-parallel code builds on an all-reduce of float32s, shared by the
// strategy (package distribute) and the model's checks (package nn).
package collective

// RanksWhere returns, on every rank of a job of size ranks, the ranks on
// which cond is true, in order: each rank sets its own flag in a buffer
// of one per rank, and sum (the job's in-place all-reduce, collective)
// adds them up.
func RanksWhere(size, rank int, cond bool, sum func([]float32) error) ([]int, error) {
	flags := make([]float32, size)
	if cond {
		flags[rank] = 1
	}
	if err := sum(flags); err != nil {
		return nil, err
	}
	var ranks []int
	for r, f := range flags {
		if f != 0 {
			ranks = append(ranks, r)
		}
	}
	return ranks, nil
}
