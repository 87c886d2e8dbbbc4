package onnx

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// Permute maps to Transpose, perm 0 and then its dims; the graph computes
// what Predict does: the Transpose as ONNX defines perm (output axis i is
// input axis perm[i]), computed here by hand, then the Flatten and Gemm
// after it.
func TestExportONNXPermute(t *testing.T) {
	m := nn.NewSequential(layers.Input(2, 3, 4), layers.Permute([]int{3, 1, 2}), layers.Flatten(), layers.Dense(5))
	om := exportedONNX(t, m, true)
	checkGraph(t, om, m)
	if got, want := opTypes(om), []string{"Transpose", "Flatten", "Gemm"}; !slices.Equal(got, want) {
		t.Fatalf("ops %v, want %v", got, want)
	}
	tr := nodeOf(t, om, "Transpose")
	perm := ints(t, tr, "perm")
	if !slices.Equal(perm, []int64{0, 3, 1, 2}) {
		t.Fatalf("Transpose's perm %v, want [0 3 1 2]", perm)
	}
	const rows = 3
	rng := rand.New(rand.NewPCG(8, 8))
	x := randomRows(rng, rows, 2*3*4)
	var flat []float32
	for _, r := range x {
		flat = append(flat, r...)
	}
	inputs, err := data.SliceInputs(data.Flat(flat, 2, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	preds, err := m.PredictOutputs(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	// The Transpose by its perm: out[b][i][j][k] = x[b][...] with input
	// axis perm[a] at output axis a's index.
	in := []int{rows, 2, 3, 4}
	out := make([]int, 4)
	for a, p := range perm {
		out[a] = in[p]
	}
	var transposed []float64
	idx := make([]int, 4)
	for o := range rows * 2 * 3 * 4 {
		for a, r := 3, o; a >= 0; a-- {
			idx[a], r = r%out[a], r/out[a]
		}
		src := make([]int, 4)
		for a, p := range perm {
			src[p] = idx[a]
		}
		transposed = append(transposed, float64(x[src[0]][(src[1]*3+src[2])*4+src[3]]))
	}
	// The rest of the graph, from the Flatten's output.
	rest := *om
	rest.Graph.Nodes = om.Graph.Nodes[2:]
	got := evaluateGraph(t, &rest, map[string][]float64{om.Graph.Nodes[1].Outputs[0]: transposed}, rows)[om.Graph.Outputs[0].Name]
	want := preds[0].Values()
	if len(got) != len(want) {
		t.Fatalf("the graph computes %d values, Predict %d", len(got), len(want))
	}
	for i, w := range want {
		if math.Abs(got[i]-float64(w)) > 1e-5 {
			t.Errorf("value %d: the graph computes %v, Predict %v", i, got[i], w)
		}
	}
}
