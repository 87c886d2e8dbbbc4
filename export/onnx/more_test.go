package onnx

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gokeras/gokeras/data"
	wire "github.com/gokeras/gokeras/internal/formats/onnx"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// Export writes to a writer the bytes ExportFile writes to a file, and
// writes nothing where it fails.
func TestExportWritesWhatExportFileWrites(t *testing.T) {
	m := nn.NewSequential(layers.Input(4, 4, 2), layers.Conv2D(3, 2, layers.ReLU), layers.Flatten(), layers.Dense(2))
	m.SetSeed(3)
	var buf bytes.Buffer
	if err := Export(m, &buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := ExportFile(m, path); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), file) {
		t.Errorf("Export wrote %d bytes, ExportFile %d, not the same", buf.Len(), len(file))
	}

	m.Layers()[0].Params()[0].Value.Data().([]float32)[0] = float32(math.NaN())
	buf.Reset()
	if err := Export(m, &buf); err == nil || !strings.Contains(err.Error(), "training diverged") || buf.Len() != 0 {
		t.Errorf("a NaN weight: %v, and %d bytes written", err, buf.Len())
	}
	if err := Export(m, nil); err == nil || !strings.Contains(err.Error(), "ExportFile") {
		t.Errorf("a nil writer: %v", err)
	}
	if err := Export(nil, &buf); !errors.Is(err, nn.ErrNilModel) || !strings.HasPrefix(err.Error(), "export ONNX: ") {
		t.Errorf("a nil model: %v", err)
	}
}

// gate is a dataset that holds the first batch Fit gathers until released.
type gate struct {
	data.Dataset
	once             sync.Once
	entered, release chan struct{}
}

func (g *gate) GatherInputs(idx []int, dst []float32) error {
	g.once.Do(func() { close(g.entered); <-g.release })
	return g.Dataset.GatherInputs(idx, dst)
}

// While Fit runs a step, an export from another goroutine is refused with
// ErrBusy instead of racing with the step (it reads the weights); after
// the Fit it runs.
func TestExportDuringFitIsRefused(t *testing.T) {
	m := nn.NewSequential(layers.Input(3), layers.Dense(4, layers.ReLU), layers.Dense(2))
	checkGraph(t, exportedONNX(t, m, false), m) // compiled on the CPU
	g := &gate{Dataset: randomTargets(t, m, 16), entered: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error)
	go func() {
		_, err := m.Fit(context.Background(), g, nn.Verbose(0))
		done <- err
	}()
	<-g.entered
	dir := t.TempDir()
	for name, export := range map[string]func() error{
		"ExportFile": func() error { return ExportFile(m, filepath.Join(dir, "m.onnx")) },
		"Export":     func() error { var b bytes.Buffer; return Export(m, &b) },
	} {
		err := export()
		if !errors.Is(err, nn.ErrBusy) || !strings.HasPrefix(err.Error(), `export ONNX: model "sequential" is `) {
			t.Errorf("%s during Fit: %v, want ErrBusy", name, err)
		}
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatalf("the Fit: %v", err)
	}
	if err := ExportFile(m, filepath.Join(dir, "m.onnx")); err != nil {
		t.Errorf("after Fit: %v", err)
	}
}

// GELU has no ONNX op below operator set 20: it is written out as
// 0.5·x·(1 + erf(x/√2)), on the layout its input has.
func TestExportONNXGELU(t *testing.T) {
	m := nn.NewSequential(layers.Input(3), layers.Dense(4, layers.GELU), layers.NewActivation(layers.GELU))
	m.SetSeed(4)
	om := exportedONNX(t, m, false)
	checkGraph(t, om, m)
	want := []string{"Gemm", "Div", "Erf", "Add", "Mul", "Mul", "Div", "Erf", "Add", "Mul", "Mul"}
	if got := opTypes(om); !slices.Equal(got, want) {
		t.Fatalf("ops %v, want %v", got, want)
	}
	for name, v := range map[string]float32{"dense/sqrt2": math.Sqrt2, "dense/one": 1, "dense/half": 0.5, "activation/sqrt2": math.Sqrt2} {
		if init := om.Graph.Initializer(name); init == nil || len(init.Dims) != 0 || !slices.Equal(init.Floats, []float32{v}) {
			t.Errorf("initializer %s: %+v, want the scalar %v", name, init, v)
		}
	}

	// The graph computes gokeras' GELU (x·Φ(x), Φ = erfc(-x/√2)/2), twice.
	x := []float64{-3, -0.5, 0, 0.25, 1, 2.5}
	got := evaluate(t, om, x, 3)
	kernel, bias := layerParam(m.Layers()[0], "kernel").Value.Data().([]float32), layerParam(m.Layers()[0], "bias").Value.Data().([]float32)
	gelu := func(v float64) float64 { return 0.5 * v * math.Erfc(-v/math.Sqrt2) }
	for r := range 2 {
		for j := range 4 {
			z := float64(bias[j])
			for k := range 3 {
				z += x[r*3+k] * float64(kernel[k*4+j])
			}
			if w := gelu(gelu(z)); math.Abs(got[r*4+j]-w) > 1e-6 {
				t.Errorf("row %d output %d: the graph computes %v, gokeras' GELU %v", r, j, got[r*4+j], w)
			}
		}
	}

	// After a convolution, channels first until the end.
	c := nn.NewSequential(layers.Input(3, 3, 2), layers.Conv2D(2, 1, layers.GELU))
	om = exportedONNX(t, c, false)
	want = []string{"Transpose", "Conv", "Div", "Erf", "Add", "Mul", "Mul", "Transpose"}
	if got := opTypes(om); !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
}

// Every activation but softmax, each in a Dense layer: the graph computes
// what Predict does, with ONNX's own operator where operator set 17 has
// one.
func TestExportONNXActivations(t *testing.T) {
	cases := []struct {
		act layers.Activation
		ops []string
	}{
		{layers.GELUApproximate, []string{"Mul", "Mul", "Mul", "Add", "Mul", "Tanh", "Add", "Mul", "Mul"}},
		{layers.Swish, []string{"Sigmoid", "Mul"}},
		{layers.ELU, []string{"Elu"}},
		{layers.SELU, []string{"Selu"}},
		{layers.Softplus, []string{"Softplus"}},
		{layers.Softsign, []string{"Softsign"}},
		{layers.HardSigmoid, []string{"HardSigmoid"}},
		{layers.Exponential, []string{"Exp"}},
		{layers.LeakyReLU, []string{"LeakyRelu"}},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, 6*3)
	for i := range x {
		x[i] = float32(4*rng.Float64() - 2)
	}
	x64 := make([]float64, len(x))
	for i, v := range x {
		x64[i] = float64(v)
	}
	for _, tc := range cases {
		t.Run(tc.act.String(), func(t *testing.T) {
			m := nn.NewSequential(layers.Input(3), layers.Dense(4, tc.act, layers.KernelInitializer(layers.RandomNormal(0, 1))))
			m.SetSeed(5)
			om := exportedONNX(t, m, false)
			checkGraph(t, om, m)
			if got := opTypes(om); !slices.Equal(got[1:], tc.ops) {
				t.Errorf("ops %v, want Gemm then %v", got, tc.ops)
			}
			inputs, err := data.SliceInputs(data.Flat(x, 3))
			if err != nil {
				t.Fatal(err)
			}
			pred, err := m.Predict(context.Background(), inputs)
			if err != nil {
				t.Fatal(err)
			}
			got := evaluate(t, om, x64, 3)
			for i, w := range pred.Values() {
				if math.Abs(got[i]-float64(w)) > 1e-5*math.Max(1, math.Abs(float64(w))) {
					t.Errorf("output %d: the graph computes %v, Predict %v", i, got[i], w)
				}
			}
		})
	}
}

// The LeakyReLU, ELU and PReLU layers: ONNX's LeakyRelu and Elu with the
// layers' alphas, PRelu with alpha as its slope (channels last), computing
// what Predict does.
func TestExportONNXAdvancedActivationLayers(t *testing.T) {
	m := nn.NewSequential(layers.Input(3), layers.Dense(4, layers.KernelInitializer(layers.RandomNormal(0, 1))),
		layers.NewPReLU(layers.AlphaInitializer(layers.RandomNormal(0.3, 0.2))), layers.NewLeakyReLU(0.1),
		layers.Dense(4, layers.KernelInitializer(layers.RandomNormal(0, 1))), layers.NewELU(0.5))
	m.SetSeed(6)
	om := exportedONNX(t, m, false)
	checkGraph(t, om, m)
	if got, want := opTypes(om), []string{"Gemm", "PRelu", "LeakyRelu", "Gemm", "Elu"}; !slices.Equal(got, want) {
		t.Fatalf("ops %v, want %v", got, want)
	}
	for _, n := range om.Graph.Nodes {
		if n.OpType == "LeakyRelu" || n.OpType == "Elu" {
			if len(n.Attributes) != 1 || n.Attributes[0].Name != "alpha" {
				t.Errorf("%s's attributes %+v, want alpha", n.OpType, n.Attributes)
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 8*3)
	x64 := make([]float64, len(x))
	for i := range x {
		x[i] = float32(4*rng.Float64() - 2)
		x64[i] = float64(x[i])
	}
	inputs, err := data.SliceInputs(data.Flat(x, 3))
	if err != nil {
		t.Fatal(err)
	}
	pred, err := m.Predict(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	got := evaluate(t, om, x64, 3)
	for i, w := range pred.Values() {
		if math.Abs(got[i]-float64(w)) > 1e-5*math.Max(1, math.Abs(float64(w))) {
			t.Errorf("output %d: the graph computes %v, Predict %v", i, got[i], w)
		}
	}

	// After a convolution, PRelu takes its input channels last, as alpha
	// (1, 1, channels) is.
	c := nn.NewSequential(layers.Input(3, 3, 2), layers.Conv2D(2, 1), layers.NewPReLU(layers.SharedAxes(1, 2)))
	om = exportedONNX(t, c, false)
	if got, want := opTypes(om), []string{"Transpose", "Conv", "Transpose", "PRelu"}; !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	if a := om.Graph.Initializer("p_re_lu/alpha"); a == nil || !slices.Equal(a.Dims, []int64{1, 1, 2}) {
		t.Errorf("alpha's initializer %+v, want dims [1 1 2]", a)
	}
}

// evaluate runs a graph of one input, "input", and one output, "output",
// on rows of cols inputs, as evaluateGraph does.
func evaluate(t *testing.T, om *wire.Model, x []float64, cols int) []float64 {
	t.Helper()
	return evaluateGraph(t, om, map[string][]float64{"input": x}, len(x)/cols)["output"]
}

// evaluateGraph runs a graph of Gemm, Div, Erf, Add, Mul and Identity
// nodes, with scalar or same-sized operands, on the given rows of its
// inputs, named, in float64, and returns every value it computes (the
// graph's outputs among them).
func evaluateGraph(t *testing.T, om *wire.Model, inputs map[string][]float64, rows int) map[string][]float64 {
	t.Helper()
	vals := map[string][]float64{}
	for name, x := range inputs {
		vals[name] = x
	}
	for _, init := range om.Graph.Initializers {
		v := make([]float64, len(init.Floats))
		for i, f := range init.Floats {
			v[i] = float64(f)
		}
		vals[init.Name] = v
	}
	elementwise := func(a, b []float64, f func(x, y float64) float64) []float64 {
		out := make([]float64, max(len(a), len(b)))
		for i := range out {
			x, y := a[0], b[0]
			if len(a) > 1 {
				x = a[i]
			}
			if len(b) > 1 {
				y = b[i]
			}
			out[i] = f(x, y)
		}
		return out
	}
	for _, n := range om.Graph.Nodes {
		in := func(i int) []float64 { return vals[n.Inputs[i]] }
		// attr is the node's float attribute, or ONNX's default for it.
		attr := func(name string, def float64) float64 {
			for _, a := range n.Attributes {
				if a.Name == name {
					return float64(a.F)
				}
			}
			return def
		}
		unary := func(f func(x float64) float64) []float64 {
			return elementwise(in(0), []float64{0}, func(x, _ float64) float64 { return f(x) })
		}
		var out []float64
		switch n.OpType {
		case "Gemm":
			k := om.Graph.Initializer(n.Inputs[1])
			inner, units := int(k.Dims[0]), int(k.Dims[1])
			out = make([]float64, rows*units)
			for r := range rows {
				for j := range units {
					s := in(2)[j]
					for i := range inner {
						s += in(0)[r*inner+i] * in(1)[i*units+j]
					}
					out[r*units+j] = s
				}
			}
		case "Div":
			out = elementwise(in(0), in(1), func(x, y float64) float64 { return x / y })
		case "Add":
			out = elementwise(in(0), in(1), func(x, y float64) float64 { return x + y })
		case "Mul":
			out = elementwise(in(0), in(1), func(x, y float64) float64 { return x * y })
		case "Erf":
			out = unary(math.Erf)
		// The activations, as the ONNX operators' documentation defines
		// them, with its default attributes.
		case "Tanh":
			out = unary(math.Tanh)
		case "Sigmoid":
			out = unary(func(x float64) float64 { return 1 / (1 + math.Exp(-x)) })
		case "Exp":
			out = unary(math.Exp)
		case "Elu":
			alpha := attr("alpha", 1)
			out = unary(func(x float64) float64 {
				if x < 0 {
					return alpha * (math.Exp(x) - 1)
				}
				return x
			})
		case "Selu":
			alpha, gamma := attr("alpha", 1.67326319217681884765625), attr("gamma", 1.05070102214813232421875)
			out = unary(func(x float64) float64 {
				if x <= 0 {
					return gamma * (alpha*math.Exp(x) - alpha)
				}
				return gamma * x
			})
		case "Softplus":
			out = unary(func(x float64) float64 { return math.Log(math.Exp(x) + 1) })
		case "Softsign":
			out = unary(func(x float64) float64 { return x / (1 + math.Abs(x)) })
		case "HardSigmoid":
			alpha, beta := attr("alpha", 0.2), attr("beta", 0.5)
			out = unary(func(x float64) float64 { return math.Max(0, math.Min(1, alpha*x+beta)) })
		case "PRelu":
			// The slope holds the sample's trailing values: it repeats
			// along the batch.
			slope := in(1)
			out = make([]float64, len(in(0)))
			for i, x := range in(0) {
				out[i] = x
				if x < 0 {
					out[i] = slope[i%len(slope)] * x
				}
			}
		case "LeakyRelu":
			alpha := attr("alpha", 0.01)
			out = unary(func(x float64) float64 {
				if x < 0 {
					return alpha * x
				}
				return x
			})
		case "Identity":
			out = in(0)
		default:
			t.Fatalf("evaluate: no %s", n.OpType)
		}
		vals[n.Outputs[0]] = out
	}
	return vals
}
