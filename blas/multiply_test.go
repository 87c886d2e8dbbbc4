package blas

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/avx512"
	"github.com/gokeras/gokeras/internal/kernels/gemmtest"
)

// withStandInKernels returns a Multiplier whose "kernels" take the products
// the AVX-512 kernels take (all but those of two transposed operands,
// which they leave with ErrUnsupported) and compute them with gonum,
// counting them in taken if it is not nil: the Multiplier's routing and
// fallback run on any CPU.
func withStandInKernels(lib *Library, taken *atomic.Int64) *Multiplier {
	m := NewMultiplier(lib, false)
	m.kernels = true
	m.kernelSgemm = func(ws *avx512.Workspace, transA, transB bool, mm, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
		if ws == nil {
			return errors.New("stand-in kernels called without a workspace")
		}
		if transA && transB {
			return avx512.ErrUnsupported
		}
		if taken != nil {
			taken.Add(1)
		}
		return PureGo().Sgemm(transA, transB, mm, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	return m
}

func TestReadSetting(t *testing.T) {
	cases := []struct {
		blas, cpuKernels string
		want             setting
	}{
		{"", "", setting{kernels: true}},
		{"auto", "", setting{kernels: true}},
		{" AUTO ", "", setting{kernels: true}},
		{"native", "", setting{origin: "GOKERAS_BLAS=native"}},
		{"go", "", setting{library: "go", origin: "GOKERAS_BLAS=go"}},
		{"gonum", "", setting{library: "go", origin: "GOKERAS_BLAS=gonum"}},
		{"/opt/lib/libopenblas.so", "", setting{library: "/opt/lib/libopenblas.so", origin: "GOKERAS_BLAS=/opt/lib/libopenblas.so"}},
		{"libblis.so.4", "", setting{library: "libblis.so.4", origin: "GOKERAS_BLAS=libblis.so.4"}},
		// The older switch turns the kernels off alone ...
		{"", "blas", setting{origin: "GOKERAS_CPU_KERNELS=blas"}},
		{"", "BLAS", setting{origin: "GOKERAS_CPU_KERNELS=BLAS"}},
		// ... GOKERAS_BLAS still names the library, and says so.
		{"go", "blas", setting{library: "go", origin: "GOKERAS_BLAS=go"}},
		// Other values of the older switch never did anything.
		{"", "avx512", setting{kernels: true}},
	}
	for _, tc := range cases {
		env := map[string]string{EnvVar: tc.blas, kernelsEnvVar: tc.cpuKernels}
		if got := readSetting(func(k string) string { return env[k] }); got != tc.want {
			t.Errorf("GOKERAS_BLAS=%q GOKERAS_CPU_KERNELS=%q: %+v, want %+v", tc.blas, tc.cpuKernels, got, tc.want)
		}
	}
}

func TestChooseHonoursEnvVars(t *testing.T) {
	cases := []struct {
		blas, cpuKernels string
		kernels          bool // where the CPU has them
		native           bool // where a native library is installed
	}{
		{"", "", true, true},
		{"auto", "", true, true},
		{"native", "", false, true},
		{"go", "", false, false},
		{"", "blas", false, true},
	}
	haveNative := load(setting{}).Native() // whatever the test's own environment says
	for _, tc := range cases {
		t.Run(fmt.Sprintf("GOKERAS_BLAS=%s,GOKERAS_CPU_KERNELS=%s", tc.blas, tc.cpuKernels), func(t *testing.T) {
			t.Setenv(EnvVar, tc.blas)
			t.Setenv(kernelsEnvVar, tc.cpuKernels)
			m := Choose()
			if want := tc.kernels && KernelsAvailable(); m.Kernels() != want {
				t.Errorf("kernels %t, want %t: %s", m.Kernels(), want, m)
			}
			if want := tc.native && haveNative; m.Library().Native() != want {
				t.Errorf("native library %t, want %t: %s", m.Library().Native(), want, m)
			}
			if !m.Kernels() && KernelsAvailable() && !strings.Contains(m.String(), kernelsName()+" kernels off") {
				t.Errorf("%q does not say the kernels are off", m)
			}
		})
	}
}

// Each product goes to the kernels unless they leave it (two transposed
// operands), and then to the library; another error of the kernels is
// returned, not hidden by the fallback.
func TestMultiplierFallsBackPerProduct(t *testing.T) {
	var taken atomic.Int64
	m := withStandInKernels(PureGo(), &taken)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		transA, transB bool
		kernels        bool
	}{{false, false, true}, {true, false, true}, {false, true, true}, {true, true, false}} {
		c := gemmtest.NewCase(rng, tc.transA, tc.transB, 5, 6, 7, 1.5, 0.5, 1)
		got := c.Fresh()
		before := taken.Load()
		if err := m.Sgemm(c.TransA, c.TransB, c.M, c.N, c.K, c.Alpha, c.A, c.Lda, c.B, c.Ldb, c.Beta, got, c.Ldc); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if _, err := c.CheckFloat32(got); err != nil {
			t.Fatal(err)
		}
		if byKernels := taken.Load() > before; byKernels != tc.kernels {
			t.Errorf("%v: computed by the kernels %t, want %t", c, byKernels, tc.kernels)
		}
	}
	broken := errors.New("broken kernel")
	m.kernelSgemm = func(*avx512.Workspace, bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int) error {
		return broken
	}
	s := make([]float32, 4)
	if err := m.Sgemm(false, false, 2, 2, 1, 1, s, 1, s, 2, 0, s, 2); !errors.Is(err, broken) {
		t.Errorf("a kernel's error came back as %v", err)
	}
}

func TestMultiplierString(t *testing.T) {
	withKernels := withStandInKernels(PureGo(), nil)
	off := NewMultiplier(PureGo(), false)
	off.off = "GOKERAS_BLAS=native"
	cases := []struct {
		name       string
		m          *Multiplier
		want, not  []string
		onlyAVX512 bool // the want holds only on a CPU with kernels (AVX-512 or AVX2)
	}{
		{"kernels", withKernels, []string{kernelsName() + " kernels (", " threads); other products: pure Go (gonum)"}, []string{InstallHint, "off"}, false},
		{"no kernels", NewMultiplier(PureGo(), false), []string{"pure Go (gonum, "}, []string{"kernels ("}, false},
		{"kernels turned off", off, []string{"pure Go (gonum, ", "; " + kernelsName() + " kernels off (GOKERAS_BLAS=native)"}, nil, true},
	}
	for _, tc := range cases {
		s := tc.m.String()
		if tc.onlyAVX512 && !KernelsAvailable() {
			if strings.Contains(s, "AVX") {
				t.Errorf("%s: %q mentions AVX kernels on a CPU without them", tc.name, s)
			}
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: %q does not contain %q", tc.name, s, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(s, w) {
				t.Errorf("%s: %q contains %q", tc.name, s, w)
			}
		}
	}
}

// One Multiplier serves every machine and op of a process at once.
func TestMultiplierConcurrentUse(t *testing.T) {
	ms := map[string]*Multiplier{"stand-in kernels": withStandInKernels(PureGo(), nil), "Default": Default()}
	for name, m := range ms {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 9))
				for i := range 20 {
					c := gemmtest.NewCase(rng, i%3 == 1, i%3 == 2, 9+g, 50, 17+i, 1, 1, 0)
					got := c.Fresh()
					if err := m.Sgemm(c.TransA, c.TransB, c.M, c.N, c.K, c.Alpha, c.A, c.Lda, c.B, c.Ldb, c.Beta, got, c.Ldc); err != nil {
						errs <- err
						return
					}
					if _, err := c.CheckFloat32(got); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The kernels' workspaces are kept from product to product: a training
// step allocates nothing for them.
func TestMultiplierReusesWorkspaces(t *testing.T) {
	m := withStandInKernels(PureGo(), nil)
	m.kernelSgemm = func(*avx512.Workspace, bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int) error {
		return nil
	}
	s := make([]float32, 4)
	if allocs := testing.AllocsPerRun(100, func() {
		if err := m.Sgemm(false, false, 2, 2, 1, 1, s, 1, s, 2, 0, s, 2); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per product, want 0", allocs)
	}
}

// On a CPU with AVX2 and FMA but not AVX-512, the AVX2 kernels compute
// the products, within the rounding bound, and send those of two
// transposes to the library.
func TestAVX2KernelsRouting(t *testing.T) {
	if !useAVX2() {
		t.Skip("this CPU runs the AVX-512 kernels, or none")
	}
	m := NewMultiplier(PureGo(), true)
	if !m.Kernels() || !m.avx2 || !strings.HasPrefix(m.String(), "AVX2 kernels (") {
		t.Fatalf("AVX2 kernels not chosen: %s", m)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tr := range []struct{ a, b bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		c := gemmtest.NewCase(rng, tr.a, tr.b, 33, 50, 31, -0.01, 1, 2)
		got := c.Fresh()
		if err := m.Sgemm(c.TransA, c.TransB, c.M, c.N, c.K, c.Alpha, c.A, c.Lda, c.B, c.Ldb, c.Beta, got, c.Ldc); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if _, err := c.CheckFloat32(got); err != nil {
			t.Fatal(err)
		}
	}
	if off := NewMultiplier(PureGo(), false); off.Kernels() || off.avx2 {
		t.Error("kernels on in a Multiplier asked for none")
	}
}
