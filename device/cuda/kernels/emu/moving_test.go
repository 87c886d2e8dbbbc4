//go:build kernelemu && cgo

package emu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// gk_moving_average computes ops.MovingUpdate's bits: m·moving +
// (1-m)·stat·bessel in double, rounded to float, in place, over grids of
// any shape (the grid-stride loop), in race mode too.
func TestMovingAverageMatchesOps(t *testing.T) {
	const n = 1000
	rng := rand.New(rand.NewPCG(7, 7))
	moving, stat := make([]float32, n), make([]float32, n)
	for i := range moving {
		moving[i], stat[i] = float32(rng.NormFloat64()), float32(rng.ExpFloat64()*3)
	}
	for _, p := range []ops.MovingParams{{Momentum: 0.99}, {Momentum: 0.9, Bessel: 32.0 / 31}, {Momentum: 0}, {Momentum: 1}} {
		want := slices.Clone(moving)
		ops.MovingUpdate(p, want, stat)
		for _, shape := range [][2]int{{1, 1}, {4, 256}, {8, 32}} {
			for _, seed := range []uint64{0, raceSeeds[0]} {
				got := slices.Clone(moving)
				pin(t, got, stat)
				setRace(t, seed)
				err := LaunchKernel("gk_moving_average", shape[0], shape[1], 0,
					[]uint64{ptr(got), ptr(stat), n, math.Float64bits(p.Momentum), math.Float64bits(p.Factor())})
				if err != nil {
					t.Fatalf("%+v, grid %d×%d, race seed %d: %v", p, shape[0], shape[1], seed, err)
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%+v, grid %d×%d, race seed %d: value %d is %v, ops.MovingUpdate's %v", p, shape[0], shape[1], seed, i, got[i], want[i])
					}
				}
			}
		}
	}
}
