package nn

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/blas"
	"github.com/gokeras/gokeras/datasets/cifar10"
)

var updateFixtures = flag.Bool("update", false, "rewrite the loss fixtures in testdata/ from this run")

// sgdLossesFixture holds the losses of the first 100 SGD steps of the
// CIFAR-10 MLP (batch 32, seed 1, synthetic data), as float32 bits, one
// file per multiply path (%s): recorded before the plan compiler replaced
// the CPU graph machine. The engine may be rearranged freely; these numbers
// may not move.
const sgdLossesFixture = "testdata/sgd_losses_100_%s.json"

// multiplyPath names how CPU machines multiply on this machine, for the
// fixtures: "avx512" or "avx2" for the kernels, else the BLAS library's
// name, followed by the kernel set it chose for this CPU where it says
// (OpenBLAS runs its Zen kernels on AMD Zen 3 and its Cooperlake ones on
// Zen 4, and the two round differently).
func multiplyPath() string {
	mul := blas.Default()
	if mul.Kernels() {
		if strings.HasPrefix(mul.String(), "AVX2 ") {
			return "avx2"
		}
		return "avx512"
	}
	lib := mul.Library()
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' {
			return r
		}
		return ' '
	}, strings.ToLower(lib.Name()+" "+lib.Core()))
	return strings.Join(strings.Fields(name), "-")
}

// requireFixtureVar, set to a non-empty value (CI sets CI=true), makes a
// multiply path without a fixture fail the test instead of skipping it:
// every path CI takes must be guarded.
const requireFixtureVar = "CI"

// TestSGDLossesUnchanged trains the CIFAR-10 MLP at its real sizes for 100
// SGD steps and checks every loss bit for bit against the fixture.
func TestSGDLossesUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("the full-size model takes a few seconds; skipped with -short")
	}
	path := filepath.FromSlash(fmt.Sprintf(sgdLossesFixture, multiplyPath()))
	if _, err := os.Stat(path); err != nil && !*updateFixtures {
		msg := fmt.Sprintf("no fixture for this machine's multiply path, %s (%s): each path rounds differently; record one with go test ./nn -run '^TestSGDLossesUnchanged$' -update on a known-good commit, checked against another path's fixture",
			blas.Default(), path)
		if os.Getenv(requireFixtureVar) != "" {
			t.Fatalf("%s=%s: %s", requireFixtureVar, os.Getenv(requireFixtureVar), msg)
		}
		t.Skip(msg)
	}
	m := flagship(t, false)
	defer m.Close()
	data := cifar10.Synthetic(3200, 0, 1).Train.OneHot()
	if err := m.checkData("test", data); err != nil {
		t.Fatal(err)
	}
	p, err := m.program(32, labelLayout{cols: 10}, modeTrain)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]uint32, 100)
	idx := make([]int, 32)
	for step := range got {
		for j := range idx {
			idx[j] = (step*32 + j*7) % data.Len()
		}
		loss, err := m.trainStep(p, data, idx)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		got[step] = math.Float32bits(float32(loss))
	}
	if *updateFixtures {
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./nn -run SGDLossesUnchanged -update on a known-good commit to record it)", err)
	}
	var want []uint32
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("fixture has %d losses, the test runs %d steps", len(want), len(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("step %d: loss %v (bits %#x), recorded %v (bits %#x)", i,
				math.Float32frombits(got[i]), got[i], math.Float32frombits(want[i]), want[i])
		}
	}
}

// The fixtures of the different multiply paths were recorded on different
// machines and commits; each is only as good as the code that recorded it.
// They vouch for each other: over the first 30 steps, before float32
// rounding differences grow through training, every two agree within
// 1e-6 relative (they differ by 3e-7 at most), as paths that compute the
// same products in different orders do. A fixture recorded from a wrong
// step would not.
func TestSGDLossFixturesAgree(t *testing.T) {
	paths, err := filepath.Glob(filepath.FromSlash(fmt.Sprintf(sgdLossesFixture, "*")))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 2 {
		t.Fatalf("%d loss fixtures, want one per multiply path", len(paths))
	}
	const steps, tol = 30, 1e-6
	losses := make([][]uint32, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &losses[i]); err != nil || len(losses[i]) < steps {
			t.Fatalf("%s: %d losses, %v", p, len(losses[i]), err)
		}
	}
	for i := range paths {
		for j := i + 1; j < len(paths); j++ {
			for s := range steps {
				a, b := float64(math.Float32frombits(losses[i][s])), float64(math.Float32frombits(losses[j][s]))
				if d := math.Abs(a-b) / math.Abs(b); !(d <= tol) {
					t.Errorf("step %d: %s has loss %v, %s %v: %.2g relative apart, want at most %g",
						s, filepath.Base(paths[i]), a, filepath.Base(paths[j]), b, d, tol)
				}
			}
		}
	}
}
