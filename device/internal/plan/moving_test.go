package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bnGraph is a batch normalization of x (4 rows of 2 channels) with the
// moving statistics mean and variance, then a product with a learnable w
// and a squared error: in training (train) with the batch's statistics
// and the updates of the moving ones (momentum m, the variance's with
// bessel), else with the moving statistics, the output read into out.
type bnGraph struct {
	g    *gorgonia.ExprGraph
	x    *tensor.Dense
	w    *gorgonia.Node
	out  gorgonia.Value
	next []*gorgonia.Node // the MovingAverage nodes
}

func newBNGraph(t *testing.T, mean, variance, w *tensor.Dense, train bool, m, bessel float64) *bnGraph {
	t.Helper()
	g := gorgonia.NewGraph()
	b := &bnGraph{g: g, x: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(4, 2))}
	in := func(name string, v *tensor.Dense) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float32, v.Dims(), gorgonia.WithShape(v.Shape()...), gorgonia.WithName(name), gorgonia.WithValue(v))
	}
	x := in("x", b.x)
	mm, mv := in("moving_mean", mean), in("moving_variance", variance)
	gamma := in("gamma", tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 1})))
	beta := in("beta", tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{0, 0})))
	b.w = in("w", w)
	must := func(n *gorgonia.Node, err error) *gorgonia.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	stMean, stVar := mm, mv
	if train {
		var err error
		if stMean, stVar, err = ops.ColumnMoments(x); err != nil {
			t.Fatal(err)
		}
		b.next = append(b.next, must(ops.MovingAverage(mm, stMean, ops.MovingParams{Momentum: m})),
			must(ops.MovingAverage(mv, stVar, ops.MovingParams{Momentum: m, Bessel: bessel})))
	}
	y := must(ops.BatchNormalize(x, stMean, stVar, gamma, beta, ops.NormParams{Epsilon: 1e-3, BatchStats: train}, false))
	z := must(ops.Affine(y, b.w, nil, true))
	gorgonia.Read(z, &b.out)
	if train {
		target := in("y", tensor.New(tensor.WithShape(4, 3), tensor.WithBacking(make([]float32, 12))))
		loss := must(ops.Loss(ops.MeanSquaredError, z, target))
		if _, err := gorgonia.Grad(loss, b.w); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// batch fills x with step k's batch: channel 0 is 0, 1, 2, 3 plus k (mean
// 1.5+k, biased variance 1.25), channel 1 is 0, 2k, 4k, 6k (mean 3k,
// variance 5k²): statistics float32 holds exactly.
func (b *bnGraph) batch(k int) (mean, variance [2]float64) {
	d := b.x.Data().([]float32)
	for r := 0; r < 4; r++ {
		d[2*r], d[2*r+1] = float32(r+k), float32(2*r*k)
	}
	return [2]float64{1.5 + float64(k), 3 * float64(k)}, [2]float64{1.25, 5 * float64(k*k)}
}

// The moving statistics are updated on the device by MovingAverage steps
// at the end of every training step (RunAll has none of them); the host
// copies change only at a Sync, and then hold the recurrence worked out
// here step by step; an inference graph of the same weights reads the
// device's copies in between.
func TestMovingStatisticsOnTheDevice(t *testing.T) {
	const m, bessel, steps = 0.75, 4.0 / 3, 4
	mean := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{0, 0}))
	variance := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 1}))
	w := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{0.1, -0.2, 0.3, 0.4, 0.5, -0.6}))
	tg := newBNGraph(t, mean, variance, w, true, m, bessel)
	p, err := Compile(tg.g, []*gorgonia.Node{tg.w}, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Moving) != 2 {
		t.Fatalf("the plan has %d moving updates, want 2: %v", len(p.Moving), p.Moving)
	}
	for i, s := range p.Moving {
		if s.Kind != MovingAverage || s.Op.Kind != ops.OpMovingAverage || s.In[0] != s.Out[0] || p.Buffers[s.In[0]].Role != State {
			t.Errorf("moving update %d: %v (buffer %d a %v buffer)", i, s, s.In[0], p.Buffers[s.In[0]].Role)
		}
	}
	if got := p.Moving[1].Op.Moving; got.Momentum != m || got.Bessel != bessel {
		t.Errorf("the variance's update carries %+v, want momentum %v, bessel %v", got, m, bessel)
	}
	for _, s := range p.Steps {
		if s.Kind == MovingAverage {
			t.Errorf("a moving update among the plan's steps (RunAll would run it): %v", s)
		}
	}
	sgd := optim.Update{Rule: optim.RuleSGD, LearningRate: 0.01, Iteration: 1}
	ts, err := p.TrainingSteps(sgd)
	if err != nil {
		t.Fatal(err)
	}
	if tail := ts[len(ts)-2:]; tail[0].Kind != MovingAverage || tail[1].Kind != MovingAverage {
		t.Errorf("the training steps end with %v, want the two moving updates", tail)
	}
	rs, err := p.ReducedTrainingSteps(sgd)
	if err != nil {
		t.Fatal(err)
	}
	if tail := rs[len(rs)-3:]; tail[0].Kind != Reduce || !slices.Equal(tail[0].In, []int{p.Moving[0].In[1], p.Moving[1].In[1]}) ||
		tail[1].Kind != MovingAverage || tail[2].Kind != MovingAverage {
		t.Errorf("the data-parallel steps end with %v, want a Reduce of the statistics, then the moving updates", tail)
	}

	dev := &hostDevice{}
	state := driver.NewState()
	defer state.Close()
	trainer, err := New(p, newHostBackend(dev), state, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer trainer.Close()
	want := [2][]float32{{0, 0}, {1, 1}}
	for k := 1; k <= steps; k++ {
		bm, bv := tg.batch(k)
		if err := trainer.Train(sgd); err != nil {
			t.Fatal(err)
		}
		for c := range 2 {
			want[0][c] = float32(m*float64(want[0][c]) + (1-m)*bm[c])
			want[1][c] = float32(m*float64(want[1][c]) + (1-m)*bv[c]*bessel)
		}
	}
	if got := mean.Data().([]float32); !slices.Equal(got, []float32{0, 0}) {
		t.Fatalf("the host's moving mean changed before a Sync: %v", got)
	}

	// An inference graph of the same tensors normalizes with the device's
	// moving statistics without copying the host's over.
	ig := newBNGraph(t, mean, variance, w, false, m, bessel)
	ip, err := Compile(ig.g, nil, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	be := newHostBackend(dev)
	infer, err := New(ip, be, state, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer infer.Close()
	ig.batch(1)
	if err := infer.RunAll(); err != nil {
		t.Fatal(err)
	}
	if n := be.uploads[&mean.Data().([]float32)[0]]; n != 0 {
		t.Errorf("the inference machine uploaded the stale moving mean %d times", n)
	}
	onDevice := clone(ig.out.(*tensor.Dense).Data().([]float32))

	if err := state.Sync(); err != nil {
		t.Fatal(err)
	}
	for i, got := range [][]float32{mean.Data().([]float32), variance.Data().([]float32)} {
		if !slices.Equal(got, want[i]) {
			t.Errorf("moving %s after %d steps and a Sync: %v, want %v (m·moving + (1-m)·stat·bessel, step by step)",
				[]string{"mean", "variance"}[i], steps, got, want[i])
		}
	}
	// From the synced host copies, a machine of its own computes what
	// the inference graph computed from the device's.
	fresh := newBNGraph(t, mean, variance, w, false, m, bessel)
	fresh.batch(1)
	if err := hostMachine(t, fresh.g, nil).RunAll(); err != nil {
		t.Fatal(err)
	}
	compareSlices(t, "outputs from the synced moving statistics", fresh.out.(*tensor.Dense).Data().([]float32), onDevice)
}

// A weight updated twice, or a learnable updated as a moving statistic,
// is refused when the graph is compiled.
func TestMovingAverageRejects(t *testing.T) {
	mean := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{0, 0}))
	variance := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 1}))
	w := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(make([]float32, 6)))
	tg := newBNGraph(t, mean, variance, w, true, 0.5, 1)
	// A second update of the moving mean, with the first one's value.
	if _, err := ops.MovingAverage(tg.g.ByName("moving_mean")[0], tg.next[0], ops.MovingParams{Momentum: 0.5}); err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(tg.g, []*gorgonia.Node{tg.w}, Capabilities{}); err == nil || !strings.Contains(err.Error(), "updated twice") {
		t.Errorf("a moving statistic updated twice: error %v", err)
	}
	tl := newBNGraph(t, mean, variance, w, true, 0.5, 1)
	if _, err := Compile(tl.g, []*gorgonia.Node{tl.w, tl.g.ByName("moving_mean")[0]}, Capabilities{}); err == nil || !strings.Contains(err.Error(), "not a non-trainable weight") {
		t.Errorf("a learnable updated as a moving statistic: error %v", err)
	}
}
