package avx512_test

import (
	"fmt"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
)

// convLayer is one convolution of a model, computed as its patches times
// its kernel: pixels output positions a sample, depth = KH·KW·Cin values a
// patch, filters = Cout, grad whether its patches' gradient is computed
// (not for the first layer, whose input is the data).
type convLayer struct {
	name                   string
	pixels, depth, filters int
	grad                   bool
	count                  int // how many layers of the model have this shape
}

// convLayers are the convolutions of ResNet-20 v1 (train --model resnet20)
// and of Keras' cifar10_cnn (--model cnn) on CIFAR-10's 32×32×3 images.
var convLayers = []convLayer{
	{"resnet20/32x32/3-16", 1024, 27, 16, false, 1},
	{"resnet20/32x32/16-16", 1024, 144, 16, true, 6},
	{"resnet20/16x16/16-32s2", 256, 144, 32, true, 1},
	{"resnet20/16x16/16-32-1x1", 256, 16, 32, true, 1},
	{"resnet20/16x16/32-32", 256, 288, 32, true, 5},
	{"resnet20/8x8/32-64s2", 64, 288, 64, true, 1},
	{"resnet20/8x8/32-64-1x1", 64, 32, 64, true, 1},
	{"resnet20/8x8/64-64", 64, 576, 64, true, 5},
	{"cnn/32x32/3-32", 1024, 27, 32, false, 1},
	{"cnn/30x30/32-32", 900, 288, 32, true, 1},
	{"cnn/15x15/32-64", 225, 288, 64, true, 1},
	{"cnn/13x13/64-64", 169, 576, 64, true, 1},
}

// convProduct is one product of a convolution's training step as the CPU
// backend computes it: the forward product onto the bias (beta 1), the
// patches' gradient (a·bᵀ) and the kernel's gradient (aᵀ·b, into a strip
// the update then reads: beta 0).
type convProduct struct {
	name           string
	transA, transB bool
	m, n, k        int
	beta           float32
}

func convProducts(l convLayer, batch int) []convProduct {
	rows := batch * l.pixels
	ps := []convProduct{{"fwd", false, false, rows, l.filters, l.depth, 1}}
	if l.grad {
		ps = append(ps, convProduct{"dpatches", false, true, rows, l.depth, l.filters, 0})
	}
	return append(ps, convProduct{"dkernel", true, false, l.depth, l.filters, rows, 0})
}

type sgemmFunc func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error

func benchProduct(bm *testing.B, sgemm sgemmFunc, p convProduct) {
	ar, ac := p.m, p.k
	if p.transA {
		ar, ac = p.k, p.m
	}
	br, bc := p.k, p.n
	if p.transB {
		br, bc = p.n, p.k
	}
	a := make([]float32, ar*ac)
	b := make([]float32, br*bc)
	c := make([]float32, p.m*p.n)
	for i := range a {
		a[i] = float32(i%7)*0.1 - 0.3
	}
	for i := range b {
		b[i] = float32(i%5)*0.1 - 0.2
	}
	// Once before the clock starts: c's pages, the workspace's buffers.
	if err := sgemm(p.transA, p.transB, p.m, p.n, p.k, 1, a, ac, b, bc, p.beta, c, p.n); err != nil {
		bm.Fatal(err)
	}
	cpu0 := cpuTime()
	for bm.Loop() {
		if err := sgemm(p.transA, p.transB, p.m, p.n, p.k, 1, a, ac, b, bc, p.beta, c, p.n); err != nil {
			bm.Fatal(err)
		}
	}
	flops := 2 * float64(p.m) * float64(p.n) * float64(p.k) * float64(bm.N)
	bm.ReportMetric(flops/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
	// Per second of CPU time, all threads together: what the product
	// reaches per core, less sensitive than the wall clock to other work
	// on a shared machine (but blind to a core left idle).
	bm.ReportMetric(flops/(cpuTime()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
}

// BenchmarkConvProducts times every product of the convolutions of
// ResNet-20 and cifar10_cnn at batch 32 and 128 three ways, one after the
// other for each product so that they see the same load: "avx512", the
// AVX-512 kernels as package blas dispatches them (Workspace.Sgemm: the
// tall kernels for these shapes); "wide", the AVX-512 kernels written for
// wide weights that computed them before the tall ones existed; "avx2",
// the AVX2 kernels (their own tall kernels), which CPUs without AVX-512
// run. The square product (1024³: a·b, aᵀ·b, a·bᵀ) gives the peak of the
// same kernels. Run it with a few dozen iterations:
//
//	go test -run XXX -bench ConvProducts -benchtime 20x ./internal/kernels/avx512
func BenchmarkConvProducts(bm *testing.B) {
	if !avx512.Available() {
		bm.Skip("no AVX-512 on this CPU")
	}
	ws := avx512.NewWorkspace(0)
	impls := []struct {
		name  string
		sgemm sgemmFunc
	}{{"avx512", ws.Sgemm}, {"cached", func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
		defer avx512.SetTallStreamBytes(avx512.SetTallStreamBytes(1 << 62))
		return ws.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}}, {"wide", ws.SgemmWide}}
	if avx2.Available() {
		impls = append(impls, struct {
			name  string
			sgemm sgemmFunc
		}{"avx2", avx2.NewWorkspace(0).Sgemm})
	}
	run := func(name string, p convProduct) {
		for _, impl := range impls {
			bm.Run(name+"/"+impl.name, func(bm *testing.B) { benchProduct(bm, impl.sgemm, p) })
		}
	}
	for _, sq := range []convProduct{
		{"nn", false, false, 1024, 1024, 1024, 0},
		{"tn", true, false, 1024, 1024, 1024, 0},
		{"nt", false, true, 1024, 1024, 1024, 0},
	} {
		run("square/"+sq.name, sq)
	}
	for _, batch := range []int{32, 128} {
		for _, l := range convLayers {
			for _, p := range convProducts(l, batch) {
				run(fmt.Sprintf("b%d/%s/%s", batch, l.name, p.name), p)
			}
		}
	}
}
