package avx512_test

import (
	"math"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/avx512"
	"github.com/gokeras/gokeras/ops"
)

// dropoutRef is the dropout by its definition: unit 4·block+i keeps
// x[i]·scale when its Philox word is at least t.
func dropoutRef(x []float32, block, step, key uint64, t uint32, scale float32) []float32 {
	y := make([]float32, len(x))
	for i := range x {
		b := block + uint64(i/4)
		w := ops.Philox4x32([4]uint32{uint32(b), uint32(b >> 32), uint32(step), uint32(step >> 32)}, [2]uint32{uint32(key), uint32(key >> 32)})
		if w[i%4] >= t {
			y[i] = x[i] * scale
		}
	}
	return y
}

func TestDropoutBitIdenticalToPhilox(t *testing.T) {
	if !avx512.Available() {
		t.Skip("no AVX-512 on this CPU")
	}
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0, 1e-45, 3e38}
	cases := []struct {
		name             string
		n                int
		block, step, key uint64
		threshold        uint32
		scale            float32
		wantDone         int
	}{
		{"rate 0.25", 64 * 5, 0, 1, 0x1234_5678_9abc_def0, 1 << 30, 4.0 / 3, 64 * 5},
		{"rate 0.5, tail", 64*3 + 17, 12345, 1<<40 + 7, 42, 1 << 31, 2, 64 * 3},
		{"keep all", 64, 7, 0, 0, 0, 1, 64},
		{"drop almost all", 128, 9, 3, 1, math.MaxUint32, 5, 128},
		{"high counter words", 64 * 2, 1<<33 + 100, math.MaxUint64, math.MaxUint64, 3 << 30, 1.5, 128},
		{"low word wraps in the next group", 64 * 3, 1<<32 - 32, 5, 6, 1 << 31, 2, 128},
		{"low word wraps in the first group", 64 * 2, 1<<32 - 8, 5, 6, 1 << 31, 2, 0},
		{"fewer than a group", 63, 0, 1, 2, 1 << 31, 2, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := make([]float32, c.n)
			for i := range x {
				x[i] = float32((i*7919+int(c.block%97))%2000)/1000 - 1
			}
			for i, v := range special {
				if i*9 < c.n {
					x[i*9] = v
				}
			}
			y := make([]float32, c.n)
			for i := range y {
				y[i] = float32(math.NaN()) // every value it does must be written
			}
			done := avx512.Dropout(x, y, c.block, c.step, c.key, c.threshold, c.scale)
			if done != c.wantDone {
				t.Fatalf("did %d units, want %d", done, c.wantDone)
			}
			want := dropoutRef(x[:done], c.block, c.step, c.key, c.threshold, c.scale)
			kept := 0
			for i := range want {
				if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
					t.Fatalf("unit %d: %v (%#x), want %v (%#x)", i, y[i], math.Float32bits(y[i]), want[i], math.Float32bits(want[i]))
				}
				if want[i] != 0 {
					kept++
				}
			}
			for i := done; i < c.n; i++ {
				if !math.IsNaN(float64(y[i])) {
					t.Fatalf("unit %d beyond the %d done was written", i, done)
				}
			}
			t.Logf("%d of %d kept", kept, done)
		})
	}
}
