package tfjs_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/export/tfjs"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// The random augmentation layers, identity in Predict, are written as
// linear Activations (TensorFlow.js runs them in inference only);
// Rescaling as TensorFlow.js' Rescaling, with its scale and offset.
func TestExportPreprocessing(t *testing.T) {
	m := nn.NewSequential(layers.Input(4, 4, 3), layers.RandomFlip("horizontal", layers.Seed(2)), layers.RandomTranslation(0.1, 0.1),
		layers.Rescaling(1.0/255, 0.5), layers.Flatten(), layers.Dense(2))
	m.SetSeed(1)
	if err := m.Build(4, 4, 3); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := tfjs.Export(m, dir); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Layers []struct {
			ClassName string         `json:"class_name"`
			Config    map[string]any `json:"config"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(readManifest(t, dir).ModelTopology.ModelConfig.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	var classes []string
	for _, l := range cfg.Layers {
		classes = append(classes, l.ClassName)
	}
	if want := []string{"InputLayer", "Activation", "Activation", "Rescaling", "Flatten", "Dense"}; !slices.Equal(classes, want) {
		t.Fatalf("layers %v, want %v", classes, want)
	}
	if c := cfg.Layers[1].Config; c["activation"] != "linear" || c["name"] != "random_flip" {
		t.Errorf("RandomFlip is written as %v, want a linear Activation named random_flip", c)
	}
	if c := cfg.Layers[3].Config; c["scale"] != 1.0/255 || c["offset"] != 0.5 {
		t.Errorf("Rescaling's config %v", c)
	}
}
