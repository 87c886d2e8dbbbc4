package cpu

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gokeras/gokeras/blas"
	"github.com/gokeras/gokeras/internal/gemm"
)

// KernelsEnvVar names the environment variable that turns the AVX-512
// kernels off: GOKERAS_CPU_KERNELS=blas computes every product with
// blas.Default instead.
const KernelsEnvVar = "GOKERAS_CPU_KERNELS"

// multiplier is the sgemm the backend computes with: the AVX-512 kernels
// where the CPU has them and they are not turned off, else blas.Default.
type multiplier struct {
	ws  *gemm.Workspace
	lib *blas.Library
}

func newMultiplier() multiplier {
	mm := multiplier{lib: blas.Default()}
	if gemm.Available() && !strings.EqualFold(strings.TrimSpace(os.Getenv(KernelsEnvVar)), "blas") {
		mm.ws = gemm.NewWorkspace(0)
	}
	return mm
}

func (mm multiplier) sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if mm.ws != nil {
		err := mm.ws.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		if !errors.Is(err, gemm.ErrUnsupported) {
			return err
		}
	}
	return mm.lib.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Kernels describes in one line how the CPU backend multiplies matrices,
// for programs to print when they start, e.g. "AVX-512 kernels for dense
// layers (2 threads); other products: OpenBLAS 0.3.21 (libopenblas.so.0,
// ...)" or, on a CPU without AVX-512, what blas.Default is.
func Kernels() string {
	mm := newMultiplier()
	if mm.ws == nil {
		return mm.lib.String()
	}
	other := mm.lib.Name() // its install hint matters little next to the kernels
	if mm.lib.Native() {
		other = mm.lib.String()
	}
	return fmt.Sprintf("AVX-512 kernels for dense layers (%d threads); other products: %s", mm.ws.Workers(), other)
}
