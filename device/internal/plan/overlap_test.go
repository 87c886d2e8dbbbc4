package plan

import (
	"math"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
)

// viewDevice is hostDevice whose memory the host reads in place
// (HostMemory, HostView), as the CPU's: machines on it take a reducer.
type viewDevice struct{ *hostDevice }

func (d viewDevice) Host(data []float32) Mem     { return data }
func (d viewDevice) View(m Mem, n int) []float32 { return m.([]float32)[:n] }

type viewBackend struct {
	*hostBackend
	dev viewDevice
}

func (b viewBackend) Device() Device { return b.dev }

// Overlapping the all-reduce with the backward pass hands each gradient
// to the reducer as soon as the last step that touches it has run, in
// buckets, and gives the same weights, bit for bit, as reducing after the
// backward pass.
func TestOverlappedReduceMatchesReduced(t *testing.T) {
	defer func(first, bucket int) { FirstBucketBytes, BucketBytes = first, bucket }(FirstBucketBytes, BucketBytes)
	FirstBucketBytes, BucketBytes = 1, 1 // every gradient its own bucket
	spec := modelSpec{hidden: ops.ReLU, out: ops.Softmax, loss: ops.SoftmaxCrossEntropy, fromLogits: true, batch: 4}
	v := newValues(spec, 9)
	var weights [2][][]float32
	var calls [2][][]int
	for run, overlap := range []bool{false, true} {
		m := buildModel(t, spec, v, true)
		p, err := Compile(m.g, m.learnables(), Capabilities{})
		if err != nil {
			t.Fatal(err)
		}
		state := driver.NewState()
		defer state.Close()
		dev := viewDevice{&hostDevice{}}
		mc, err := New(p, viewBackend{newHostBackend(dev.hostDevice), dev}, state, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer mc.Close()
		// A stand-in for the sum over replicas: each value becomes a
		// function of itself alone.
		if err := mc.SetGradientReducer(func(grads [][]float32) error {
			var sizes []int
			for _, g := range grads {
				sizes = append(sizes, len(g))
				for i := range g {
					g[i] = g[i]*1.5 + float32(math.Sin(float64(i)))*1e-3
				}
			}
			calls[run] = append(calls[run], sizes)
			return nil
		}, overlap); err != nil {
			t.Fatal(err)
		}
		for it := range 3 {
			if err := mc.Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, Iteration: int64(it + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := state.Sync(); err != nil {
			t.Fatal(err)
		}
		for _, l := range m.learnables() {
			weights[run] = append(weights[run], slices.Clone(l.Value().Data().([]float32)))
		}
		kinds := map[Kind]int{}
		for _, s := range mc.lastSteps {
			kinds[s.Kind]++
		}
		if overlap && (kinds[ReduceStart] != len(p.Learnables) || kinds[ReduceWait] != 1 || kinds[Reduce] != 0) {
			t.Errorf("overlapped steps: %v, want a ReduceStart per gradient and one ReduceWait:\n%v", kinds, mc.lastSteps)
		}
		if overlap {
			last := slices.IndexFunc(mc.lastSteps, func(s Step) bool { return s.Kind == ReduceWait })
			first := slices.IndexFunc(mc.lastSteps, func(s Step) bool { return s.Kind == ReduceStart })
			if first < 0 || first >= len(p.Steps)-1 || last < first {
				t.Errorf("the first bucket starts at step %d of the plan's %d, want before its last:\n%v", first, len(p.Steps), mc.lastSteps)
			}
		}
	}
	if len(calls[1]) != 3*len(weights[1]) || len(calls[0]) != 3 {
		t.Errorf("reducer calls: %v without overlap, %v with", calls[0], calls[1])
	}
	for i := range weights[0] {
		for j := range weights[0][i] {
			if math.Float32bits(weights[0][i][j]) != math.Float32bits(weights[1][i][j]) {
				t.Fatalf("weight %d[%d]: %v overlapped, %v not", i, j, weights[1][i][j], weights[0][i][j])
			}
		}
	}
}
