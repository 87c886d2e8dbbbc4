//go:build kernelemu && cgo

package emu

import (
	"errors"
	"fmt"
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
func pin[T any](t testing.TB, slices ...[]T) {
	var p runtime.Pinner
	for _, s := range slices {
		p.Pin(&s[0])
	}
	t.Cleanup(p.Unpin)
}

// setRace turns race mode on with seed (off with 0) until the test ends.
func setRace(t testing.TB, seed uint64) {
	old := RaceSeed()
	SetRace(seed)
	t.Cleanup(func() { SetRace(old) })
}

var raceSeeds = []uint64{1, 2, 3, 0xdecafbad}

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
	pin(t, y)
	pin(t, flag)
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

// How emu_test_pair (internal/race/test_kernels.h) touches its word.
const (
	read = iota
	write
	atomicWrite
	atomicRead
)

// TestRaceDetection runs two accesses to one word, by two threads of a
// block (or two blocks), with and without a barrier between them, in race
// mode with several seeds: a race is reported when the two are in one
// barrier interval (for blocks, always) and at least one is a plain write,
// or one a plain read and the other an atomic write; never otherwise.
func TestRaceDetection(t *testing.T) {
	names := []string{"read", "write", "atomic write", "atomic read"}
	p, sink := make([]int32, 1), make([]int32, 64)
	pin(t, p, sink)
	races := func(first, second int) bool {
		if first == write || second == write {
			return true
		}
		return first == read && second == atomicWrite || first == atomicWrite && second == read
	}
	type place struct {
		name           string
		shared, blocks bool
	}
	for _, at := range []place{{"global", false, false}, {"shared", true, false}, {"global, two blocks", false, true}, {"shared, two blocks", true, true}} {
		for first := range 4 {
			for second := range 4 {
				for _, sync := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s then %s/sync %t", at.name, names[first], names[second], sync)
					want := races(first, second) && (!sync || at.blocks) && !(at.shared && at.blocks)
					grid, block, a, b := 1, 32, 3, 17
					if at.blocks {
						grid, block, a, b = 2, 1, 0, 1
					}
					args := []uint64{ptr(p), ptr(sink), uint64(a), uint64(b), uint64(first), uint64(second), cbit(sync), cbit(at.shared), cbit(at.blocks)}
					for _, seed := range raceSeeds {
						setRace(t, seed)
						p[0] = 1000
						err := LaunchKernel("emu_test_pair", grid, block, 4, args)
						var race *RaceError
						if errors.As(err, &race) != want || err != nil && race == nil {
							t.Errorf("%s, seed %d: %v, want a race: %t", name, seed, err, want)
							continue
						}
						if race == nil {
							continue
						}
						mem := "global memory"
						if at.shared {
							mem = "shared memory"
						}
						who := fmt.Sprintf("thread %d", b)
						if at.blocks {
							who = "block"
						}
						if r := race.Report; !strings.Contains(r, "emu_test_pair") || !strings.Contains(r, mem) || !strings.Contains(r, who) {
							t.Errorf("%s, seed %d: the report %q does not name the kernel, %s and %s", name, seed, r, mem, who)
						}
					}
				}
			}
		}
	}
}

func cbit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// TestRacyZeroOneLabels: gk_zero_one_labels without its barrier after
// *flag = 1 (emu_test_racy_zero_one) passes in the fixed schedule, where
// thread 0 runs first, and fails in race mode, whatever the seed; and the
// random schedules do make its result wrong for some seeds, as a GPU
// would. The kernel with its barrier passes.
func TestRacyZeroOneLabels(t *testing.T) {
	y := []float32{0, 1, 1, 0, 1, 0.5, 0, 1}
	flag := []int32{7}
	pin(t, y)
	pin(t, flag)
	args := []uint64{ptr(y), uint64(len(y)), ptr(flag)}
	setRace(t, 0)
	if _, err := LaunchKernelTraced("emu_test_racy_zero_one", 1, 32, 0, args); err != nil || flag[0] != 0 {
		t.Fatalf("the fixed schedule: flag %d, %v; want 0 and no error", flag[0], err)
	}
	wrong := 0
	for seed := uint64(1); seed <= 40; seed++ {
		setRace(t, seed)
		flag[0] = 7
		err := LaunchKernel("emu_test_racy_zero_one", 1, 32, 0, args)
		var race *RaceError
		if !errors.As(err, &race) || !strings.Contains(race.Report, "thread 0") {
			t.Errorf("seed %d: %v, want a race naming thread 0's write", seed, err)
		}
		if flag[0] == 1 {
			wrong++
		}
		flag[0] = 7
		if err := LaunchKernel("gk_zero_one_labels", 1, 32, 0, args); err != nil || flag[0] != 0 {
			t.Errorf("seed %d: gk_zero_one_labels: flag %d, %v; want 0 and no error", seed, flag[0], err)
		}
	}
	if wrong == 0 {
		t.Error("no seed of 40 ran thread 0's write after another thread's atomicMin")
	}
	t.Logf("%d seeds of 40 computed the wrong flag", wrong)
}

// TestRaceSchedule: race mode runs the CUDA threads of a block and the
// blocks of a grid in a random order (each seed its own), yet no thread
// passes a barrier before every thread of its block arrives; without it,
// in thread and block order.
func TestRaceSchedule(t *testing.T) {
	const grid, block = 3, 64
	count, arrivals := make([]int32, 2), make([]int32, grid)
	order, seen, blocks := make([]int32, grid*block), make([]int32, grid*block), make([]int32, grid)
	pin(t, count, arrivals, order, seen, blocks)
	args := []uint64{ptr(count), ptr(arrivals), ptr(order), ptr(seen), ptr(blocks)}
	identity := func(s []int32) bool {
		for i, v := range s {
			if v != int32(i) {
				return false
			}
		}
		return true
	}
	blockOrders := map[string]bool{}
	for _, seed := range append([]uint64{0}, raceSeeds...) {
		setRace(t, seed)
		clear(count)
		clear(arrivals)
		if _, err := LaunchKernelTraced("emu_test_order", grid, block, 0, args); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		sorted := slices.Sorted(slices.Values(order))
		if !identity(sorted) || !identity(slices.Sorted(slices.Values(blocks))) {
			t.Fatalf("seed %d: the threads ran %v, the blocks %v: not each once", seed, order, blocks)
		}
		for i, v := range seen {
			if v != block {
				t.Errorf("seed %d: thread %d passed the barrier having seen %d of %d threads arrive", seed, i, v, block)
			}
		}
		if seed == 0 {
			if !identity(order) || !identity(blocks) {
				t.Errorf("the fixed schedule ran the threads in the order %v, the blocks %v", order, blocks)
			}
			continue
		}
		shuffled := false // the threads of some block ran out of order
		for b := range int32(grid) {
			prev := int32(-1)
			for _, v := range order {
				if v/block == b {
					shuffled = shuffled || v < prev
					prev = v
				}
			}
		}
		if !shuffled {
			t.Errorf("seed %d ran the threads of each block in order: %v", seed, order)
		}
		blockOrders[fmt.Sprint(blocks)] = true
	}
	if len(blockOrders) < 2 {
		t.Errorf("the seeds ran the blocks in the orders %v only", blockOrders)
	}
}

// BenchmarkLaunchRace: gk_add over 70001 values in the normal emulator and
// in race mode (where each CUDA thread is a coroutine, and every access
// goes through the race runtime).
func BenchmarkLaunchRace(b *testing.B) {
	const n = 70001
	x, y, out := make([]float32, n), make([]float32, n), make([]float32, n)
	pin(b, x, y, out)
	args := []uint64{ptr(x), ptr(y), ptr(out), n}
	for _, seed := range []uint64{0, 1} {
		b.Run(fmt.Sprintf("seed=%d", seed), func(b *testing.B) {
			setRace(b, seed)
			for b.Loop() {
				if err := LaunchKernel("gk_add", (n+255)/256, 256, 0, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestContraction: the kernels are built to contract a*b+c into a fused
// multiply-add, as nvcc does, but not the _rn intrinsics. With a = b =
// 1+2⁻¹² and c = -(1+2⁻¹¹), a*b = 1+2⁻¹¹+2⁻²⁴ rounds to 1+2⁻¹¹ (a tie, to
// even), so the sum is 0 when rounded in two steps and 2⁻²⁴ when fused.
// The test kernel is the race copy's, built with cuda_emu.h's pragmas as
// emu.cc's copy is.
func TestContraction(t *testing.T) {
	v := []float32{1 + 0x1p-12, 1 + 0x1p-12, -(1 + 0x1p-11)}
	out := make([]float32, 2)
	pin(t, v, out)
	if _, err := LaunchKernelTraced("emu_test_fma", 1, 1, 0, []uint64{ptr(v), ptr(out)}); err != nil {
		t.Fatal(err)
	}
	if out[0] != 0x1p-24 {
		t.Errorf("a*b + c = %g, want %g (fused)", out[0], 0x1p-24)
	}
	if out[1] != 0 {
		t.Errorf("__fadd_rn(__fmul_rn(a, b), c) = %g, want 0 (not fused)", out[1])
	}
}
