package avx512_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/gokeras/gokeras/internal/kernels/avx512"
)

// The forward product with weights that are not in any cache, as in a
// training step, where each weight matrix is touched once per pass.
func BenchmarkColdForward(bm *testing.B) {
	ws := avx512.NewWorkspace(0)
	const m, n, k = 32, 3000, 3072
	a := make([]float32, m*k)
	var bs [4][]float32
	for i := range bs {
		bs[i] = make([]float32, k*n)
		for j := range bs[i] {
			bs[i][j] = 1e-3
		}
	}
	c := make([]float32, m*n)
	i := 0
	cpu0 := cpuTime()
	for bm.Loop() {
		if err := ws.Sgemm(false, false, m, n, k, 1, a, k, bs[i%4], n, 0, c, n); err != nil {
			bm.Fatal(err)
		}
		i++
	}
	bm.ReportMetric(2*m*n*k*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
	bm.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(bm.N), "cpu-ms/op")
}

func BenchmarkColdForward256(bm *testing.B) {
	ws := avx512.NewWorkspace(0)
	const m, n, k = 256, 3000, 3072
	a := make([]float32, m*k)
	var bs [2][]float32
	for i := range bs {
		bs[i] = make([]float32, k*n)
	}
	c := make([]float32, m*n)
	i := 0
	cpu0 := cpuTime()
	for bm.Loop() {
		if err := ws.Sgemm(false, false, m, n, k, 1, a, k, bs[i%2], n, 0, c, n); err != nil {
			bm.Fatal(err)
		}
		i++
	}
	bm.ReportMetric(2*m*n*k*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
	bm.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(bm.N), "cpu-ms/op")
}

// cpuTime is the CPU time the process has used: on a machine shared with
// other work it moves less than the wall clock when a core is taken away.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
