package cpu

import (
	"runtime"
	"sync"

	"github.com/gokeras/gokeras/ops"
)

// blasBatchProduct is the smallest sample product (M·K·N multiply-adds)
// batchMatMul hands to sgemm; smaller ones (a Dot layer's rows) cost less
// in the reference loop than a call each.
const blasBatchProduct = 1 << 14

// batchMatMul writes p's products of a and b into out: each sample's
// op(a)·op(b) by sgemm, the samples split between the cores; small
// products by the reference kernel (ops.BatchMatMulForward).
func (mm multiplier) batchMatMul(p ops.BatchMatMulParams, a, b, out []float32) error {
	m, k, n := p.M, p.K, p.N
	if m*k*n < blasBatchProduct {
		ops.BatchMatMulForward(p, a, b, out)
		return nil
	}
	lda, ldb := k, n
	if p.TransA {
		lda = m
	}
	if p.TransB {
		ldb = k
	}
	workers := min(runtime.GOMAXPROCS(0), p.Batch)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := w; s < p.Batch; s += workers {
				err := mm.sgemm(p.TransA, p.TransB, m, n, k, 1, a[s*m*k:(s+1)*m*k], lda, b[s*k*n:(s+1)*k*n], ldb, 0, out[s*m*n:(s+1)*m*n], n)
				if err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
