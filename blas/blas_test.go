package blas

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// naive computes c = alpha·op(a)·op(b) + beta·c in float64 by the definition.
func naive(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	at := func(i, p int) float64 {
		if transA {
			return a[p*lda+i]
		}
		return a[i*lda+p]
	}
	bt := func(p, j int) float64 {
		if transB {
			return b[j*ldb+p]
		}
		return b[p*ldb+j]
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				s += at(i, p) * bt(p, j)
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}

// libraries returns what to test: always the pure-Go BLAS, and the
// default one when it is native.
func libraries(t *testing.T) []*Library {
	libs := []*Library{PureGo()}
	if d := Default(); d.Native() {
		libs = append(libs, d)
	} else {
		t.Logf("no native BLAS here (%s): testing the pure-Go one only", d)
	}
	return libs
}

func TestSgemmMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name             string
		m, n, k          int
		transA, transB   bool
		alpha, beta      float64
		padA, padB, padC int // extra columns of stride
	}{
		{"plain", 7, 5, 9, false, false, 1, 0, 0, 0, 0},
		{"transA", 7, 5, 9, true, false, 1, 0, 0, 0, 0},
		{"transB", 7, 5, 9, false, true, 1, 0, 0, 0, 0},
		{"both", 7, 5, 9, true, true, 1, 0, 0, 0, 0},
		{"sgd-update", 40, 33, 8, true, false, -0.01, 1, 0, 0, 0},
		{"momentum", 12, 20, 6, true, false, -0.01, 0.9, 0, 0, 0},
		{"strides", 6, 4, 5, false, true, 2, -0.5, 3, 2, 1},
		{"k=0 scales c", 3, 4, 0, false, false, 1, 0.5, 0, 0, 0},
		{"alpha=0 zeroes c", 3, 4, 5, false, false, 0, 0, 0, 0, 0},
		{"one column", 9, 1, 17, false, false, 1, 0, 0, 0, 0},
		{"big", 64, 130, 70, false, false, 1, 0, 0, 0, 0},
	}
	for _, lib := range libraries(t) {
		for _, tc := range cases {
			t.Run(lib.Name()+"/"+tc.name, func(t *testing.T) {
				ar, ac := tc.m, tc.k
				if tc.transA {
					ar, ac = tc.k, tc.m
				}
				br, bc := tc.k, tc.n
				if tc.transB {
					br, bc = tc.n, tc.k
				}
				lda, ldb, ldc := max(1, ac+tc.padA), max(1, bc+tc.padB), max(1, tc.n+tc.padC)
				a64 := randSlice(rng, max(ar*lda, 1))
				b64 := randSlice(rng, max(br*ldb, 1))
				c64 := randSlice(rng, tc.m*ldc)
				if tc.beta == 0 {
					for i := range c64 {
						c64[i] = math.NaN() // beta 0: c is not read
					}
				}
				a32, b32, c32 := to32(a64), to32(b64), to32(c64)
				d64 := append([]float64(nil), c64...)
				want := append([]float64(nil), c64...)
				naive(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a64, lda, b64, ldb, tc.beta, want, ldc)
				if err := lib.Sgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, float32(tc.alpha), a32, lda, b32, ldb, float32(tc.beta), c32, ldc); err != nil {
					t.Fatal(err)
				}
				if err := lib.Dgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a64, lda, b64, ldb, tc.beta, d64, ldc); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < tc.m; i++ {
					for j := 0; j < ldc; j++ {
						w := want[i*ldc+j]
						if j >= tc.n { // padding: untouched
							if !same(float64(c32[i*ldc+j]), float64(float32(c64[i*ldc+j]))) || !same(d64[i*ldc+j], c64[i*ldc+j]) {
								t.Fatalf("wrote into the stride padding at (%d,%d)", i, j)
							}
							continue
						}
						if g := float64(c32[i*ldc+j]); math.Abs(g-w) > 1e-4*(1+math.Abs(w)) {
							t.Fatalf("sgemm c[%d,%d] = %v, want %v", i, j, g, w)
						}
						if g := d64[i*ldc+j]; math.Abs(g-w) > 1e-10*(1+math.Abs(w)) {
							t.Fatalf("dgemm c[%d,%d] = %v, want %v", i, j, g, w)
						}
					}
				}
			})
		}
	}
}

func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.Float64()*2 - 1
	}
	return s
}

func to32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
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
	for _, lib := range libraries(t) {
		for _, tc := range cases {
			err := lib.Sgemm(false, false, tc.m, tc.n, tc.k, 1, s[:tc.la], tc.lda, s[:tc.lb], max(tc.n, 1), 0, s[:tc.lc], max(tc.n, 1))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s/%s: error %v, want one containing %q", lib.Name(), tc.name, err, tc.want)
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
	lib := Default()
	s := lib.String()
	if s == "" {
		t.Fatal("empty description")
	}
	if lib.Native() {
		if lib.Path() == "" || !strings.Contains(s, lib.Path()) {
			t.Errorf("native library description %q does not name the file %q", s, lib.Path())
		}
	} else if !strings.Contains(s, "libopenblas") && os.Getenv(EnvVar) == "" {
		t.Errorf("pure-Go description %q does not say what to install", s)
	}
	t.Log("BLAS:", s)
}
