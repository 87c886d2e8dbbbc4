package blas

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/gemmtest"
)

// multiplier is what the tests multiply with: a Library or a Multiplier.
type multiplier interface {
	Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error
	Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) error
}

// paths returns every way of multiplying this machine has, by name: the
// pure-Go BLAS always, the native library Load finds where one is
// installed, the AVX-512 kernels where the CPU has them (in front of each
// library), a stand-in for the kernels on any CPU (it takes what they
// take and computes it with gonum, so that the fallback of the products
// they leave is tested everywhere), and Default, whatever it is.
func paths(t *testing.T) map[string]multiplier {
	ps := map[string]multiplier{
		"pure Go":                        PureGo(),
		"stand-in kernels, then gonum":   withStandInKernels(PureGo(), nil),
		"Default: " + Default().String(): Default(),
	}
	libs := []*Library{PureGo()}
	if lib := Load(); lib.Native() {
		ps[lib.Name()] = lib
		libs = append(libs, lib)
	} else {
		t.Logf("no native BLAS here (%s): not testing one", lib)
	}
	for _, lib := range libs {
		if m := NewMultiplier(lib, true); m.Kernels() {
			ps["AVX-512 kernels, then "+lib.Name()] = m
		} else {
			t.Logf("no AVX-512 on this CPU: not testing the kernels in front of %s", lib.Name())
		}
	}
	return ps
}

func TestProductsWithinRoundingBound(t *testing.T) {
	cases := []struct {
		name           string
		m, n, k        int
		transA, transB bool
		alpha, beta    float32
		pad            int // extra values of row stride
	}{
		{"plain", 7, 5, 9, false, false, 1, 0, 0},
		{"transA", 7, 5, 9, true, false, 1, 0, 0},
		{"transB", 7, 5, 9, false, true, 1, 0, 0},
		{"both", 7, 5, 9, true, true, 1, 0, 0},
		{"sgd-update", 40, 33, 8, true, false, -0.01, 1, 0},
		{"momentum", 12, 20, 6, true, false, -0.01, 0.9, 0},
		{"strides", 6, 4, 5, false, true, 2, -0.5, 3},
		{"k=0 scales c", 3, 4, 0, false, false, 1, 0.5, 0},
		{"alpha=0 zeroes c", 3, 4, 5, false, false, 0, 0, 0},
		{"one column", 9, 1, 17, false, false, 1, 0, 0},
		{"big", 64, 130, 70, false, false, 1, 0, 0},
		{"deep", 33, 50, 1100, false, false, 1, 1, 2},
		{"deep both", 33, 50, 1100, true, true, 0.5, 0.25, 1},
		{"dense-layer gradient", 300, 96, 64, true, false, -0.01, 1, 0},
		{"input gradient", 64, 300, 96, false, true, 1, 0, 1},
	}
	for name, p := range paths(t) {
		rng := rand.New(rand.NewPCG(1, 2))
		worst32, worst64 := 0.0, 0.0
		for _, tc := range cases {
			c := gemmtest.NewCase(rng, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, tc.beta, tc.pad)
			got32 := c.Fresh()
			if err := p.Sgemm(c.TransA, c.TransB, c.M, c.N, c.K, c.Alpha, c.A, c.Lda, c.B, c.Ldb, c.Beta, got32, c.Ldc); err != nil {
				t.Fatalf("%s/%s: sgemm: %v", name, tc.name, err)
			}
			w, err := c.CheckFloat32(got32)
			if err != nil {
				t.Fatalf("%s/%s: sgemm: %v", name, tc.name, err)
			}
			worst32 = max(worst32, w)
			a, b, got64 := c.Float64()
			if err := p.Dgemm(c.TransA, c.TransB, c.M, c.N, c.K, float64(c.Alpha), a, c.Lda, b, c.Ldb, float64(c.Beta), got64, c.Ldc); err != nil {
				t.Fatalf("%s/%s: dgemm: %v", name, tc.name, err)
			}
			if w, err = c.CheckFloat64(got64); err != nil {
				t.Fatalf("%s/%s: dgemm: %v", name, tc.name, err)
			}
			worst64 = max(worst64, w)
		}
		t.Logf("%s: largest error %.3g (sgemm), %.3g (dgemm) of the rounding-error bound", name, worst32, worst64)
	}
}

func TestSgemmRejectsBadArguments(t *testing.T) {
	s := make([]float32, 12)
	cases := []struct {
		name            string
		m, n, k         int
		la, lda, lb, lc int
		want            string
	}{
		{"negative", -1, 2, 2, 12, 2, 12, 12, "negative dimension"},
		{"short a", 4, 3, 3, 11, 3, 12, 12, "a is 4×3"},
		{"short c", 4, 4, 3, 12, 3, 12, 12, "c is 4×4"},
		{"stride below columns", 2, 2, 3, 12, 2, 12, 12, "row stride is 2, less than its 3 columns"},
	}
	for name, p := range paths(t) {
		for _, tc := range cases {
			err := p.Sgemm(false, false, tc.m, tc.n, tc.k, 1, s[:tc.la], tc.lda, s[:tc.lb], max(tc.n, 1), 0, s[:tc.lc], max(tc.n, 1))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "blas: sgemm: ") {
				t.Errorf("%s/%s: error %v, want one starting \"blas: sgemm: \" and containing %q", name, tc.name, err, tc.want)
			}
		}
	}
}

func TestLoadHonoursEnvVar(t *testing.T) {
	t.Setenv(EnvVar, "go")
	if lib := Load(); lib.Native() || !strings.Contains(lib.String(), "pure Go") {
		t.Errorf("%s=go gave %s, want the pure-Go BLAS", EnvVar, lib)
	}
	missing := filepath.Join(t.TempDir(), "libnothere.so")
	t.Setenv(EnvVar, missing)
	lib := Load()
	if lib.Native() {
		t.Fatalf("%s=%s loaded %s", EnvVar, missing, lib)
	}
	if s := lib.String(); !strings.Contains(s, "pure Go") || !strings.Contains(s, missing) {
		t.Errorf("fallback says %q; it should name the pure-Go BLAS and the path that failed", s)
	}
}

func TestOpenRejectsNonBLAS(t *testing.T) {
	notLib := filepath.Join(t.TempDir(), "libfake.so")
	if err := os.WriteFile(notLib, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if lib, err := Open(notLib); err == nil {
		t.Fatalf("Open(%s) = %s, want an error", notLib, lib)
	}
	// The C library loads but is no BLAS.
	if lib, err := Open("libc.so.6"); err == nil {
		t.Fatalf("Open(libc.so.6) = %s, want an error", lib)
	} else if !strings.Contains(err.Error(), "sgemm_") && !strings.Contains(err.Error(), "load") {
		t.Errorf("Open(libc.so.6): %v; want it to say sgemm_ is missing", err)
	}
}

func TestDefaultDescribesItself(t *testing.T) {
	m := Default()
	s := m.String()
	lib := m.Library()
	switch {
	case s == "":
		t.Fatal("empty description")
	case m.Kernels() && !strings.HasPrefix(s, kernelsName()+" kernels ("):
		t.Errorf("description %q does not start with the kernels", s)
	case lib.Native() && (lib.Path() == "" || !strings.Contains(s, lib.Path())):
		t.Errorf("description %q does not name the library's file %q", s, lib.Path())
	case !lib.Native() && !m.Kernels() && os.Getenv(EnvVar) == "" && !strings.Contains(s, "libopenblas"):
		t.Errorf("pure-Go description %q does not say what to install", s)
	case strings.Contains(s, "\n"):
		t.Errorf("description %q is not one line", s)
	}
	t.Log("BLAS:", s)
}
