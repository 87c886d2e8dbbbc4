//go:build kernelemu && cgo

package emu

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// ptr is the slot of a kernel's pointer argument: s's first element's
// address. The caller pins s (runtime.Pinner) for the launch.
func ptr[T any](s []T) uint64 { return uint64(uintptr(unsafe.Pointer(&s[0]))) }

func f32(v float32) uint64 { return uint64(math.Float32bits(v)) }

// span is the range of s's bytes.
func span[T any](s []T) Range {
	lo := uintptr(unsafe.Pointer(&s[0]))
	return Range{lo, lo + uintptr(len(s))*unsafe.Sizeof(s[0])}
}

// pin pins the first element of each slice until the test ends.
func pin(t *testing.T, slices ...[]float32) {
	var p runtime.Pinner
	for _, s := range slices {
		p.Pin(&s[0])
	}
	t.Cleanup(p.Unpin)
}

// TestLaunchKernelTraced: the ranges a traced launch reports are the
// global memory its kernel read and wrote, sorted and merged, without the
// shared memory or the CUDA threads' locals; its results are
// LaunchKernel's.
func TestLaunchKernelTraced(t *testing.T) {
	const n = 1000
	buf := make([]float32, 5*n)
	for i := range buf {
		buf[i] = float32(i % 17)
	}
	a, b, out := buf[:n], buf[2*n:3*n], buf[4*n:]
	rows, cols := 10, 100 // gk_sum_rows over a as 10×100, into out's first 100
	pin(t, buf)
	for _, tc := range []struct {
		name          string
		grid, block   int
		shared        int
		args          []uint64
		reads, writes []Range
	}{
		{"gk_add", 3, 64, 0, []uint64{ptr(a), ptr(b), ptr(out), n}, []Range{span(a), span(b)}, []Range{span(out)}},
		{"gk_add one thread", 1, 1, 0, []uint64{ptr(a), ptr(b), ptr(out), n}, []Range{span(a), span(b)}, []Range{span(out)}},
		{"gk_add in place", 2, 32, 0, []uint64{ptr(a), ptr(b), ptr(a), n}, []Range{span(a), span(b)}, []Range{span(a)}},
		{"gk_add of neighbours", 2, 32, 0, []uint64{ptr(buf[:n]), ptr(buf[n:]), ptr(out), n}, []Range{span(buf[:2*n])}, []Range{span(out)}},
		{"gk_scale", 4, 256, 0, []uint64{ptr(b), n, f32(0.5)}, []Range{span(b)}, []Range{span(b)}},
		{"gk_sum_rows", 2, 128, 128 * 4, []uint64{ptr(a), ptr(out), uint64(rows), uint64(cols)}, []Range{span(a)}, []Range{span(out[:cols])}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kernel, _, _ := strings.Cut(tc.name, " ")
			in := slices.Clone(buf)
			if err := LaunchKernel(kernel, tc.grid, tc.block, tc.shared, tc.args); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(buf)
			copy(buf, in)
			acc, err := LaunchKernelTraced(kernel, tc.grid, tc.block, tc.shared, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(acc.Reads, tc.reads) {
				t.Errorf("reads %v, want %v", acc.Reads, tc.reads)
			}
			if !slices.Equal(acc.Writes, tc.writes) {
				t.Errorf("writes %v, want %v", acc.Writes, tc.writes)
			}
			if !slices.Equal(buf, want) {
				t.Error("the traced launch's results are not LaunchKernel's")
			}
		})
	}
}

// TestLaunchKernelTracedAtomics: an atomic read-modify-write is a read
// and a write; an atomic load, a read.
func TestLaunchKernelTracedAtomics(t *testing.T) {
	y := []float32{0, 1, 0.5, 1}
	flag := []int32{7}
	var p runtime.Pinner
	p.Pin(&y[0])
	p.Pin(&flag[0])
	defer p.Unpin()
	args := []uint64{ptr(y), uint64(len(y)), ptr(flag)}
	acc, err := LaunchKernelTraced("gk_zero_one_labels", 1, 32, 0, args)
	if err != nil {
		t.Fatal(err)
	}
	merged := []Range{span(y), span(flag)}
	slices.SortFunc(merged, func(a, b Range) int { return int(a.Lo) - int(b.Lo) })
	if merged[0].Hi == merged[1].Lo {
		merged = []Range{{merged[0].Lo, merged[1].Hi}}
	}
	if !slices.Equal(acc.Reads, merged) || !slices.Equal(acc.Writes, []Range{span(flag)}) {
		t.Errorf("reads %v, writes %v; want reads %v (y, flag), writes %v (flag)", acc.Reads, acc.Writes, merged, span(flag))
	}
	if flag[0] != 0 {
		t.Errorf("flag %d, want 0", flag[0])
	}
}

// TestLaunchKernelTracedErrors: the traced launcher refuses what
// LaunchKernel refuses.
func TestLaunchKernelTracedErrors(t *testing.T) {
	x := make([]float32, 4)
	pin(t, x)
	for _, tc := range []struct {
		name        string
		grid, block int
		args        []uint64
	}{
		{"gk_nothing", 1, 1, nil},
		{"gk_scale", 1, 1, []uint64{ptr(x), 4}},
		{"gk_scale", 0, 1, []uint64{ptr(x), 4, f32(1)}},
		{"gk_scale", 1, 1025, []uint64{ptr(x), 4, f32(1)}},
	} {
		if _, err := LaunchKernelTraced(tc.name, tc.grid, tc.block, 0, tc.args); err == nil {
			t.Errorf("%s in %d×%d with %d arguments: no error", tc.name, tc.grid, tc.block, len(tc.args))
		}
	}
	var race *RaceError
	if _, err := LaunchKernelTraced("gk_scale", 1, 1, 0, []uint64{ptr(x), 4, f32(1)}); err != nil || errors.As(err, &race) {
		t.Errorf("gk_scale: %v", err)
	}
}
