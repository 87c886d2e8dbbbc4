package cpu_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device/cpu"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bnGraph is a training graph of a batch normalization of x (4 rows of
// 2 channels) that updates the moving statistics mean and variance
// (momentum m, the variance's with bessel), then a product with a
// learnable w and a squared error.
type bnGraph struct {
	g        *gorgonia.ExprGraph
	x        *tensor.Dense
	w        *gorgonia.Node
	mean     []float32 // the moving statistics' host memory
	variance []float32
}

func newBNGraph(t *testing.T, m, bessel float64) *bnGraph {
	t.Helper()
	g := gorgonia.NewGraph()
	b := &bnGraph{g: g, x: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(4, 2)),
		mean: []float32{0, 0}, variance: []float32{1, 1}}
	in := func(name string, data []float32, shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))))
	}
	must := func(n *gorgonia.Node, err error) *gorgonia.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	x := gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(4, 2), gorgonia.WithName("x"), gorgonia.WithValue(b.x))
	mm, mv := in("moving_mean", b.mean, 2), in("moving_variance", b.variance, 2)
	b.w = in("w", []float32{0.1, -0.2, 0.3, 0.4, 0.5, -0.6}, 2, 3)
	mean, variance, err := ops.ColumnMoments(x)
	if err != nil {
		t.Fatal(err)
	}
	must(ops.MovingAverage(mm, mean, ops.MovingParams{Momentum: m}))
	must(ops.MovingAverage(mv, variance, ops.MovingParams{Momentum: m, Bessel: bessel}))
	y := must(ops.BatchNormalize(x, mean, variance, in("gamma", []float32{1, 1}, 2), in("beta", []float32{0, 0}, 2),
		ops.NormParams{Epsilon: 1e-3, BatchStats: true}, false))
	z := must(ops.Affine(y, b.w, nil, true))
	loss := must(ops.Loss(ops.MeanSquaredError, z, in("y", make([]float32, 12), 4, 3)))
	if _, err := gorgonia.Grad(loss, b.w); err != nil {
		t.Fatal(err)
	}
	return b
}

// batch fills x with step k's batch: channel 0 is 0, 1, 2, 3 plus k (mean
// 1.5+k, biased variance 1.25), channel 1 is 0, 2k, 4k, 6k (mean 3k,
// variance 5k²), statistics float32 holds exactly.
func (b *bnGraph) batch(k int) (mean, variance [2]float64) {
	d := b.x.Data().([]float32)
	for r := 0; r < 4; r++ {
		d[2*r], d[2*r+1] = float32(r+k), float32(2*r*k)
	}
	return [2]float64{1.5 + float64(k), 3 * float64(k)}, [2]float64{1.25, 5 * float64(k*k)}
}

// track is a moving mean and variance worked out by hand: each step
// m·moving + (1-m)·stat (the variance's times bessel) in float64, rounded
// to float32.
type track struct{ mean, variance [2]float32 }

func newTrack() track { return track{variance: [2]float32{1, 1}} }

func (tr *track) step(m, bessel float64, mean, variance [2]float64) {
	for c := range 2 {
		tr.mean[c] = float32(m*float64(tr.mean[c]) + (1-m)*mean[c])
		tr.variance[c] = float32(m*float64(tr.variance[c]) + (1-m)*variance[c]*bessel)
	}
}

// On /CPU:0 the moving statistics' device memory is their host memory:
// after N training steps, on the plan machine and on the tape machine
// alike, they hold the recurrence worked out by hand, bit for bit; RunAll
// leaves them alone.
func TestMovingStatisticsFollowTheRecurrence(t *testing.T) {
	const m, bessel, steps = 0.9, 8.0 / 7, 5
	for _, reference := range []bool{false, true} {
		var warned strings.Builder
		restore := cpu.SetFallbackWarnings(&warned)
		b := newBNGraph(t, m, bessel)
		mach, err := cpu.Driver{}.NewMachine(0, b.g, driver.MachineOptions{Learnables: []*gorgonia.Node{b.w}, Reference: reference})
		restore()
		if err != nil {
			t.Fatal(err)
		}
		defer mach.Close()
		if warned.Len() > 0 {
			t.Fatalf("the plan compiler refused the graph: %s", warned.String())
		}
		want := newTrack()
		for k := 1; k <= steps; k++ {
			bm, bv := b.batch(k)
			if err := mach.(driver.Trainer).Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.01, Iteration: int64(k)}); err != nil {
				t.Fatal(err)
			}
			mach.Reset()
			want.step(m, bessel, bm, bv)
			if !slices.Equal(b.mean, want.mean[:]) || !slices.Equal(b.variance, want.variance[:]) {
				t.Fatalf("reference %t, step %d: moving mean %v, variance %v; want %v, %v", reference, k, b.mean, b.variance, want.mean, want.variance)
			}
		}
		if err := mach.RunAll(); err != nil {
			t.Fatal(err)
		}
		mach.Reset()
		if !slices.Equal(b.mean, want.mean[:]) || !slices.Equal(b.variance, want.variance[:]) {
			t.Errorf("reference %t: RunAll changed the moving statistics to %v, %v", reference, b.mean, b.variance)
		}
	}
}

// Under data parallelism the step all-reduces the batch statistics before
// the update, as it does the gradients (each scaled by the replica's share
// of the global batch, then summed). Here a reducer stands for two
// replicas of equal shards whose other one sees batch k+10: every replica
// then updates with the mean of the two shards' statistics, which, the
// update being linear in them, gives the mean of the two replicas' own
// moving statistics (what every replica held when the host averaged them
// after each step), up to float32 rounding.
func TestMovingStatisticsAveragedOverReplicas(t *testing.T) {
	const m, bessel, steps = 0.9, 8.0 / 7, 5
	for _, reference := range []bool{false, true} {
		b := newBNGraph(t, m, bessel)
		other := newBNGraph(t, m, bessel) // for the other replica's statistics
		var k int
		statCalls := 0
		reduce := func(bufs [][]float32) error {
			if len(bufs) != 2 || len(bufs[0]) != 2 || len(bufs[1]) != 2 {
				for _, g := range bufs { // the gradients: both replicas' alike
					for i := range g {
						g[i] = 0.5*g[i] + 0.5*g[i]
					}
				}
				return nil
			}
			statCalls++
			om, ov := other.batch(k + 10)
			for c := range 2 {
				bufs[0][c] = 0.5*bufs[0][c] + 0.5*float32(om[c])
				bufs[1][c] = 0.5*bufs[1][c] + 0.5*float32(ov[c])
			}
			return nil
		}
		mach, err := cpu.Driver{}.NewMachine(0, b.g, driver.MachineOptions{Learnables: []*gorgonia.Node{b.w}, Reference: reference, ReduceGradients: reduce})
		if err != nil {
			t.Fatal(err)
		}
		defer mach.Close()
		own, theirs := newTrack(), newTrack()
		for k = 1; k <= steps; k++ {
			bm, bv := b.batch(k)
			om, ov := other.batch(k + 10)
			if err := mach.(driver.Trainer).Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.01, Iteration: int64(k)}); err != nil {
				t.Fatal(err)
			}
			mach.Reset()
			own.step(m, bessel, bm, bv)
			theirs.step(m, bessel, om, ov)
			for c := range 2 {
				for _, v := range []struct {
					name      string
					got, a, b float32
				}{{"mean", b.mean[c], own.mean[c], theirs.mean[c]}, {"variance", b.variance[c], own.variance[c], theirs.variance[c]}} {
					want := (float64(v.a) + float64(v.b)) / 2
					if math.Abs(float64(v.got)-want) > 4e-7*math.Abs(want) {
						t.Errorf("reference %t, step %d: moving %s[%d] = %v, want %v, the mean of the replicas' own %v and %v",
							reference, k, v.name, c, v.got, want, v.a, v.b)
					}
				}
			}
		}
		if statCalls != steps {
			t.Errorf("reference %t: the statistics were reduced in %d of %d steps", reference, statCalls, steps)
		}
	}
}
