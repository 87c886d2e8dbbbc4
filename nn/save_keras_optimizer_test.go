package nn

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/internal/formats/hdf5"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
)

// TestKerasArchiveOptimizerStates saves, after an epoch, a model compiled
// with each optimizer Keras 3 keeps variables for, loads it and trains
// both one more epoch: the same loss, weights and step count, bit for bit.
// The archive's optimizer/vars hold as many variables as Keras 3 makes
// (counted by hand for the model's 6 trainable weights: Dense kernel and
// bias, BatchNormalization gamma and beta, Dense kernel and bias; its
// moving statistics have no slots), some of them checked against the
// optimizer's own slots at their place in Keras' order; h5py reads them
// (scripts/check-keras-archive.py).
func TestKerasArchiveOptimizerStates(t *testing.T) {
	type at struct {
		i            int
		slot, weight string
	}
	cases := []struct {
		name  string
		opt   func() (optim.Optimizer, error)
		count int  // the variables Keras 3 writes: step, rate, slots
		check []at // variables at their place in Keras' order
	}{
		{"SGD with momentum", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.8})
		}, 2 + 6, []at{{2, "momentum", "dense/kernel"}, {7, "momentum", "dense_1/bias"}}},
		{"Adam", func() (optim.Optimizer, error) { return optim.NewAdam(optim.AdamConfig{LearningRate: 0.01}) },
			2 + 12, []at{{2, "m", "dense/kernel"}, {3, "v", "dense/kernel"}, {4, "m", "dense/bias"}}},
		{"Adam with amsgrad", func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{LearningRate: 0.01, AMSGrad: true})
		}, 2 + 18, []at{{2, "m", "dense/kernel"}, {3, "v", "dense/kernel"}, {14, "vhat", "dense/kernel"}, {19, "vhat", "dense_1/bias"}}},
		{"AdamW", func() (optim.Optimizer, error) { return optim.NewAdamW(optim.AdamConfig{LearningRate: 0.01}) },
			2 + 12, []at{{5, "v", "dense/bias"}}},
		{"AdamW with amsgrad", func() (optim.Optimizer, error) {
			return optim.NewAdamW(optim.AdamConfig{LearningRate: 0.01, AMSGrad: true})
		}, 2 + 18, []at{{15, "vhat", "dense/bias"}}},
		{"RMSprop", func() (optim.Optimizer, error) { return optim.NewRMSprop(optim.RMSpropConfig{LearningRate: 0.01}) },
			2 + 6, []at{{2, "velocity", "dense/kernel"}, {3, "velocity", "dense/bias"}}},
		{"RMSprop with momentum, centered", func() (optim.Optimizer, error) {
			return optim.NewRMSprop(optim.RMSpropConfig{LearningRate: 0.01, Momentum: 0.5, Centered: true})
		}, 2 + 18, []at{{3, "velocity", "dense/bias"}, {8, "momentum", "dense/kernel"}, {14, "average_gradient", "dense/kernel"}, {19, "average_gradient", "dense_1/bias"}}},
		{"Adagrad", func() (optim.Optimizer, error) { return optim.NewAdagrad(optim.AdagradConfig{LearningRate: 0.05}) },
			2 + 6, []at{{4, "accumulator", "batch_normalization/gamma"}}},
		{"Adadelta", func() (optim.Optimizer, error) { return optim.NewAdadelta(optim.AdadeltaConfig{LearningRate: 1}) },
			2 + 12, []at{{2, "accumulated_grad", "dense/kernel"}, {3, "accumulated_delta_var", "dense/kernel"}}},
		{"Adamax", func() (optim.Optimizer, error) { return optim.NewAdamax(optim.AdamaxConfig{LearningRate: 0.01}) },
			2 + 12, []at{{2, "m", "dense/kernel"}, {3, "u", "dense/kernel"}}},
		{"Nadam", func() (optim.Optimizer, error) { return optim.NewNadam(optim.NadamConfig{LearningRate: 0.01}) },
			2 + 1 + 12, []at{{3, "m", "dense/kernel"}, {13, "m", "dense_1/bias"}, {14, "v", "dense_1/bias"}}},
	}
	py := ""
	files := checkArchiveArgs()
	dir := t.TempDir()
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := kerasArchiveModels[0].make(t)
			m.SetSeed(9)
			opt, err := c.opt()
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ds := saveData(t, 24, kerasArchiveModels[0].shape, 0, 3, false, 4)
			fitOnce(t, m, ds)

			path := filepath.Join(dir, fmt.Sprintf("%d.keras", ci))
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			files = append(files, path)
			vars := archiveOptimizerVars(t, path)
			if len(vars) != c.count {
				t.Fatalf("optimizer/vars holds %d variables, Keras 3 makes %d", len(vars), c.count)
			}
			st := m.Optimizer().(optim.Stateful).State()
			if got := vars[0]; len(got) != 1 || got[0] != float32(st.Iterations) || st.Iterations != 3 {
				t.Errorf("optimizer/vars/0 is %v, the optimizer is at step %d (want 3)", got, st.Iterations)
			}
			for _, a := range c.check {
				want := st.Slots[a.slot][a.weight]
				if want == nil || !sameBits(vars[a.i], want) {
					t.Errorf("optimizer/vars/%d is %v, want the %s of %s, %v", a.i, vars[a.i], a.slot, a.weight, want)
				}
			}
			if c.name == "Nadam" {
				// u_product, before the slots as Keras 3.9 makes it: the
				// product of β1·(1 - 0.5·0.96^s) over the 3 steps.
				p := 1.0
				for s := 1; s <= 3; s++ {
					p *= 0.9 * (1 - 0.5*math.Pow(0.96, float64(s)))
				}
				if got := vars[2]; len(got) != 1 || math.Abs(float64(got[0])-p) > 1e-7 {
					t.Errorf("Nadam's u_product is %v, want %v", got, p)
				}
			}

			loaded, err := LoadModel(path, CompileOptions(OnDevice("/CPU:0")))
			if err != nil {
				t.Fatal(err)
			}
			defer loaded.Close()
			lst := loaded.Optimizer().(optim.Stateful).State()
			if lst.Iterations != st.Iterations || len(lst.Slots) != len(st.Slots) {
				t.Fatalf("the loaded %s is at step %d with slots %d, the saved one at %d with %d", opt.Name(), lst.Iterations, len(lst.Slots), st.Iterations, len(st.Slots))
			}
			for slot, byWeight := range st.Slots {
				for w, values := range byWeight {
					if !sameBits(lst.Slots[slot][w], values) {
						t.Errorf("the loaded %s's %s of %s differs from the saved one's", opt.Name(), slot, w)
					}
				}
			}
			loaded.SetSeed(9)
			checkTrainsOn(t, m, loaded, ds)
		})
	}
	t.Run("h5py", func(t *testing.T) {
		py = h5pyPython3(t)
		checkArchives(t, py, files)
	})
}

// archiveOptimizerVars reads the optimizer/vars datasets 0, 1, ... of a
// .keras archive, as float32 values (the step count converted).
func archiveOptimizerVars(t *testing.T, path string) [][]float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h5 := archiveMember(t, b, kerasArchiveWeights)
	f, err := hdf5.Read(bytes.NewReader(h5), int64(len(h5)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.Root().Group("optimizer/vars")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	for i := range len(g.Names()) {
		d, err := g.Dataset(strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			it, err := d.Int64()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, []float32{float32(it[0])})
			continue
		}
		v, err := d.Float32()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// Keras 3.10 and later make Nadam's u_product after its slots, not before
// them as Keras 3.9 (and gokeras) does: a file laid out that way restores
// the same state.
func TestKerasArchiveNadamUProductLast(t *testing.T) {
	m := kerasArchiveModels[0].make(t)
	m.SetSeed(9)
	opt, err := optim.NewNadam(optim.NadamConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ds := saveData(t, 24, kerasArchiveModels[0].shape, 0, 3, false, 4)
	fitOnce(t, m, ds)
	var buf bytes.Buffer
	if err := m.SaveKeras(&buf); err != nil {
		t.Fatal(err)
	}
	read := func() *safetensors.File {
		f, err := readKerasArchive(bytes.NewReader(buf.Bytes()), int64(buf.Len()), func(map[string]string, []safetensors.Declared) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	restored := func(f *safetensors.File) optim.State {
		t.Helper()
		o, err := optim.NewNadam(optim.NadamConfig{LearningRate: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		fresh := kerasArchiveModels[0].make(t)
		if err := fresh.Compile(o, losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		if err := fresh.restoreKerasOptimizer(f, "m.keras"); err != nil {
			t.Fatal(err)
		}
		return o.State()
	}
	want := m.Optimizer().(optim.Stateful).State()
	f := read()
	// Move optimizer/vars/2, u_product, after the last variable.
	n := 0
	for _, tn := range f.Tensors {
		if strings.HasPrefix(tn.Name, kerasOptimizerVars) {
			n++
		}
	}
	for i := range f.Tensors {
		name, ok := strings.CutPrefix(f.Tensors[i].Name, kerasOptimizerVars)
		if !ok {
			continue
		}
		j, _ := strconv.Atoi(name)
		switch {
		case j == 2:
			j = n - 1
		case j > 2:
			j--
		}
		f.Tensors[i].Name = kerasOptimizerVars + strconv.Itoa(j)
	}
	for _, st := range []optim.State{restored(read()), restored(f)} {
		if st.Iterations != want.Iterations || len(st.Slots) != 2 {
			t.Fatalf("restored Nadam at step %d with %d slots, want step %d with 2", st.Iterations, len(st.Slots), want.Iterations)
		}
		for slot, byWeight := range want.Slots {
			for w, values := range byWeight {
				if !sameBits(st.Slots[slot][w], values) {
					t.Errorf("the restored %s of %s differs from the saved one", slot, w)
				}
			}
		}
	}
}
