package tfjs_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/export/tfjs"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

type manifest struct {
	Format        string `json:"format"`
	ModelTopology struct {
		ModelConfig struct {
			ClassName string          `json:"class_name"`
			Config    json.RawMessage `json:"config"`
		} `json:"model_config"`
	} `json:"modelTopology"`
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			Dtype string `json:"dtype"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

func readManifest(t *testing.T, dir string) manifest {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A Sequential's export: the Keras 2 topology after an InputLayer, the
// weights by name, in order, in shards of 4 MB that hold them bit for bit.
func TestExportSequential(t *testing.T) {
	m := nn.NewSequential(layers.Input(40, 40, 3), layers.Flatten(), layers.Dense(300, layers.ReLU), layers.Dropout(0.5),
		layers.Reshape([]int{-1, 10}), layers.Flatten(), layers.Dense(10, layers.Softmax, layers.KernelRegularizer(layers.L2(0.01))))
	m.SetSeed(1)
	if err := m.Build(40, 40, 3); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := tfjs.Export(m, dir); err != nil {
		t.Fatal(err)
	}
	got := readManifest(t, dir)
	if got.Format != "layers-model" || got.ModelTopology.ModelConfig.ClassName != "Sequential" {
		t.Errorf("format %q, class %q", got.Format, got.ModelTopology.ModelConfig.ClassName)
	}
	var cfg struct {
		Layers []struct {
			ClassName string         `json:"class_name"`
			Config    map[string]any `json:"config"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(got.ModelTopology.ModelConfig.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	var classes []string
	for _, l := range cfg.Layers {
		classes = append(classes, l.ClassName)
	}
	if want := []string{"InputLayer", "Flatten", "Dense", "Dropout", "Reshape", "Flatten", "Dense"}; !slices.Equal(classes, want) {
		t.Errorf("layers %v, want %v", classes, want)
	}
	if shape := cfg.Layers[0].Config["batch_input_shape"]; shape == nil || len(shape.([]any)) != 4 || shape.([]any)[0] != nil {
		t.Errorf("the InputLayer's batch_input_shape is %v, want [null, 40, 40, 3]", shape)
	}
	if ts := cfg.Layers[4].Config["target_shape"].([]any); len(ts) != 2 || ts[0] != 30.0 || ts[1] != 10.0 {
		t.Errorf("Reshape's target shape %v, want the computed [30, 10]", ts)
	}
	if cfg.Layers[3].Config["seed"] != nil || cfg.Layers[6].Config["kernel_regularizer"] != nil {
		t.Error("the Dropout's seed or the regularizer was written")
	}
	// The weights: names, shapes, shards and values.
	g := got.WeightsManifest[0]
	var names []string
	for _, w := range g.Weights {
		names = append(names, w.Name)
	}
	if want := []string{"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"}; !slices.Equal(names, want) {
		t.Errorf("weights %v, want %v", names, want)
	}
	if len(g.Paths) != 2 || g.Paths[0] != "group1-shard1of2.bin" { // 1,443,310 weights: 5.8 MB
		t.Errorf("shards %v, want 2 of at most 4 MB", g.Paths)
	}
	var all []byte
	for _, p := range g.Paths {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 4<<20 {
			t.Errorf("%s holds %d bytes, more than 4 MB", p, len(b))
		}
		all = append(all, b...)
	}
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for i, w := range ws {
		for j, v := range w.Data().([]float32) {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(all[at:])); got != v {
				t.Fatalf("weight %d, value %d: %v in the shards, %v in the model", i, j, got, v)
			}
			at += 4
		}
	}
	if at != len(all) {
		t.Errorf("the shards hold %d bytes, the weights %d", len(all), at)
	}
}

// A functional model's export: inbound nodes as Keras 2 writes them, a
// shared layer's two calls, the inputs and outputs; Identity as a linear
// Activation; Subtract refused, naming the layer.
func TestExportFunctional(t *testing.T) {
	a, b := nn.Input(4), nn.Input(4)
	shared := layers.Dense(4, layers.Tanh)
	x := nn.Apply(layers.Add(), nn.Apply(shared, a), nn.Apply(shared, b))
	out1 := nn.Apply(layers.Dense(2, layers.Named("p")), nn.Apply(layers.Identity(), x))
	out2 := nn.Apply(layers.Dense(1, layers.Named("q")), x)
	m, err := nn.NewModel([]*nn.Tensor{a, b}, []*nn.Tensor{out1, out2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := tfjs.Export(m, dir); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Layers []struct {
			Name         string `json:"name"`
			ClassName    string `json:"class_name"`
			InboundNodes []any  `json:"inbound_nodes"`
		} `json:"layers"`
		InputLayers  []any `json:"input_layers"`
		OutputLayers []any `json:"output_layers"`
	}
	got := readManifest(t, dir)
	if err := json.Unmarshal(got.ModelTopology.ModelConfig.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]string{}
	classes := map[string]string{}
	for _, l := range cfg.Layers {
		js, _ := json.Marshal(l.InboundNodes)
		nodes[l.Name], classes[l.Name] = string(js), l.ClassName
	}
	for name, want := range map[string]string{
		"dense":    `[[["input_1",0,0,{}]],[["input_2",0,0,{}]]]`,
		"add":      `[[["dense",0,0,{}],["dense",1,0,{}]]]`,
		"identity": `[[["add",0,0,{}]]]`,
		"p":        `[[["identity",0,0,{}]]]`,
		"input_1":  `[]`,
	} {
		if nodes[name] != want {
			t.Errorf("%s's inbound nodes %s, want %s", name, nodes[name], want)
		}
	}
	if classes["identity"] != "Activation" {
		t.Errorf("Identity is written as %s, want a linear Activation", classes["identity"])
	}
	js, _ := json.Marshal([]any{cfg.InputLayers, cfg.OutputLayers})
	if want := `[[["input_1",0,0],["input_2",0,0]],[["p",0,0],["q",0,0]]]`; string(js) != want {
		t.Errorf("inputs and outputs %s, want %s", js, want)
	}

	c := nn.Input(3)
	sub, err := nn.NewModel([]*nn.Tensor{c}, []*nn.Tensor{nn.Apply(layers.Subtract(), nn.Apply(layers.Dense(3), c), c)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tfjs.Export(sub, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no Subtract layer") {
		t.Errorf("a Subtract: %v", err)
	}
	if err := tfjs.Export(nn.NewSequential(layers.Input(3), layers.NewELU(0.5)), t.TempDir()); err == nil || !strings.Contains(err.Error(), "alpha 1 only") {
		t.Errorf("an ELU layer of alpha 0.5: %v", err)
	}
	if err := tfjs.Export(nn.NewSequential(layers.Input(3), layers.NewELU(1)), t.TempDir()); err != nil {
		t.Errorf("an ELU layer of alpha 1: %v", err)
	}
	for _, act := range []layers.Activation{layers.Exponential, layers.LeakyReLU, layers.GELUApproximate} {
		e := nn.NewSequential(layers.Input(3), layers.Dense(2, act))
		if err := tfjs.Export(e, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no "+act.String()+" activation") {
			t.Errorf("a Dense with activation %v: %v", act, err)
		}
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tfjs.Export(m, file); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("a file for the folder: %v", err)
	}
}

// A second export of another size replaces the first whole: its shards,
// and none of the first's left beside them; Check says what Export would
// refuse, writing nothing.
func TestExportReplacesAndChecks(t *testing.T) {
	dir := t.TempDir()
	big := nn.NewSequential(layers.Input(1100), layers.Dense(1000))
	small := nn.NewSequential(layers.Input(4), layers.Dense(2))
	for _, m := range []*nn.Model{big, small} {
		m.SetSeed(1)
		if err := m.Build(m.InputShape()...); err != nil {
			t.Fatal(err)
		}
		if err := tfjs.Export(m, dir); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"group1-shard1of1.bin", "model.json"}; !slices.Equal(names, want) {
		t.Errorf("after two exports the folder holds %v, want %v", names, want)
	}
	c := nn.Input(3)
	sub, err := nn.NewModel([]*nn.Tensor{c}, []*nn.Tensor{nn.Apply(layers.Subtract(), nn.Apply(layers.Dense(3), c), c)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tfjs.Check(sub); err == nil || !strings.Contains(err.Error(), "Subtract") {
		t.Errorf("Check of a Subtract: %v", err)
	}
	if err := tfjs.Check(small); err != nil {
		t.Errorf("Check of a Dense: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "none")
	if err := tfjs.Export(sub, empty); err == nil {
		t.Fatal("a Subtract exported")
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("a refused export made its folder: %v", err)
	}
}
