// Package collective holds the small collective steps that gokeras'
// data-parallel code builds on an all-reduce of float32s, shared by the
// strategy (package distribute) and the model's checks (package nn).
package collective

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

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

// Comm is what Agree needs of a job: its ranks, the in-place all-reduce
// of float32s and the broadcast of bytes from a root.
type Comm interface {
	Rank() int
	Size() int
	AllReduceSum(buf []float32) error
	BcastBytes(buf []byte, root int) error
}

// Agree broadcasts rank 0's description of what the job runs (desc,
// "name: value" lines), compares it with this rank's line by line, and
// fails on every rank when any differs: the ranks that differ name their
// first difference, the others name those ranks. fix says what every rank
// must share.
func Agree(c Comm, desc []string, fix string) error {
	mine := []byte(strings.Join(desc, "\n"))
	root := slices.Clone(mine)
	size := binary.LittleEndian.AppendUint64(nil, uint64(len(root)))
	if err := c.BcastBytes(size, 0); err != nil {
		return err
	}
	if c.Rank() != 0 {
		root = make([]byte, binary.LittleEndian.Uint64(size))
	}
	if err := c.BcastBytes(root, 0); err != nil {
		return err
	}
	theirs := strings.Split(string(root), "\n")
	diff := ""
	for i, line := range desc {
		if i >= len(theirs) || theirs[i] != line {
			name, here, _ := strings.Cut(line, ": ")
			there := "(nothing)"
			if i < len(theirs) {
				_, there, _ = strings.Cut(theirs[i], ": ")
			}
			diff = fmt.Sprintf("%s: %s here, %s on rank 0", name, here, there)
			break
		}
	}
	if diff == "" && len(theirs) > len(desc) {
		name, there, _ := strings.Cut(theirs[len(desc)], ": ")
		diff = fmt.Sprintf("%s: (nothing) here, %s on rank 0", name, there)
	}
	differ, err := RanksWhere(c.Size(), c.Rank(), diff != "", c.AllReduceSum)
	if err != nil {
		return err
	}
	switch {
	case diff != "":
		return fmt.Errorf("rank %d of %d does not run what rank 0 runs: %s; %s", c.Rank(), c.Size(), diff, fix)
	case len(differ) > 0:
		return fmt.Errorf("ranks %v do not run what rank 0 runs (their errors name the difference); %s", differ, fix)
	}
	return nil
}
