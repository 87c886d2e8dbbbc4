//go:build linux

package avx512

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// BenchmarkTallKernelsInCache times each tall kernel alone on one thread
// with its operands in L1 (depth 144, a 64-row a), in GFLOP per second of
// the thread's CPU time, which other work on the machine does not inflate
// as it does the wall clock: the kernels' peak, for the products' figures
// to be read against.
func BenchmarkTallKernelsInCache(bm *testing.B) {
	if !haveKernels {
		bm.Skip("no AVX-512 on this CPU")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const k, calls = 144, 100
	for _, t := range tallTiles {
		for _, kind := range []string{"rows", "cols"} {
			bm.Run(fmt.Sprintf("%s%dx%d", kind, t.r, 16*t.v), func(bm *testing.B) {
				a := make([]float32, 64*k)
				b := make([]float32, k*64)
				c := make([]float32, 64*64)
				f, lda := t.rows, k
				if kind == "cols" {
					f, lda = t.cols, 64
				}
				var ru0, ru1 syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_THREAD, &ru0)
				for bm.Loop() {
					for i := 0; i < calls; i++ {
						f(k, &a[0], uintptr(lda*4), &b[0], 64*4, &c[0], 64*4, 0, ^uint64(0), uintptr(unsafe.Pointer(&a[0])), 0, 1, 0)
					}
				}
				syscall.Getrusage(syscall.RUSAGE_THREAD, &ru1)
				cpu := time.Duration(ru1.Utime.Nano() - ru0.Utime.Nano() + ru1.Stime.Nano() - ru0.Stime.Nano())
				bm.ReportMetric(2*float64(t.r*16*t.v*k*calls)*float64(bm.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
			})
		}
	}
}

// BenchmarkConvTilesInCache times each conv kernel alone on one thread, as
// a convolution of c channels with a 3×3 kernel calls it (three kernel
// rows of 3·c values, the rows of a c values apart), its operands in the
// caches, in GFLOP per second of the thread's CPU time: the tiles' costs
// in convTiles are read from it.
func BenchmarkConvTilesInCache(bm *testing.B) {
	if !haveKernels {
		bm.Skip("no AVX-512 on this CPU")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const calls = 100
	for _, ch := range []int{16, 32, 64} {
		for _, t := range convTiles {
			n := 16 * t.v
			bm.Run(fmt.Sprintf("c%d/conv%dx%d", ch, t.r, n), func(bm *testing.B) {
				const wp = 34
				a := make([]float32, (3*wp+t.r+2)*ch)
				b := make([]float32, 9*ch*n)
				c := make([]float32, t.r*n)
				var ru0, ru1 syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_THREAD, &ru0)
				for bm.Loop() {
					for i := 0; i < calls; i++ {
						t.conv(3*ch, &a[0], uintptr(ch*4), &b[0], uintptr(n*4), &c[0], uintptr(n*4), 0, ^uint64(0), 3, uintptr(wp*ch*4), 1, 0, nil, 0)
					}
				}
				syscall.Getrusage(syscall.RUSAGE_THREAD, &ru1)
				cpu := time.Duration(ru1.Utime.Nano() - ru0.Utime.Nano() + ru1.Stime.Nano() - ru0.Stime.Nano())
				bm.ReportMetric(2*float64(t.r*n*9*ch*calls)*float64(bm.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
			})
		}
	}
}
