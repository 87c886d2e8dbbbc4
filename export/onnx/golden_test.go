package onnx

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// goldenModels are fixed models, built from a fixed seed, whose ONNX
// files must stay byte for byte what they were: together they use every
// layer class and option the exporter maps.
func goldenModels() map[string]func() []layers.Layer {
	return map[string]func() []layers.Layer{
		"cnn": func() []layers.Layer {
			return []layers.Layer{layers.Input(7, 6, 3),
				layers.Conv2D(4, 3, layers.Padding("same"), layers.ReLU, layers.Strides(2, 1)),
				layers.Conv2D(3, 2, layers.KernelSize(2, 3), layers.DilationRate(1, 2), layers.Tanh, layers.Padding("same")),
				layers.BatchNormalization(layers.Epsilon(0.01)),
				layers.MaxPooling2D(layers.Padding("same")),
				layers.AveragePooling2D(layers.PoolSize(2, 1), layers.Strides(1), layers.Padding("same")),
				layers.LayerNormalization(layers.WithoutCenter()),
				layers.Dropout(0.25),
				layers.BatchNormalization(layers.WithoutScale()),
				layers.Conv2D(2, 1, layers.Softmax, layers.WithoutBias()),
				layers.GlobalMaxPooling2D(),
				layers.Dense(5, layers.Sigmoid),
				layers.NewActivation(layers.Softmax),
			}
		},
		"images": func() []layers.Layer {
			return []layers.Layer{layers.Input(4, 4, 2), layers.Conv2D(3, 2), layers.GlobalAveragePooling2D(),
				layers.BatchNormalization(layers.WithoutCenter(), layers.WithoutScale()), layers.Dense(2, layers.Linear)}
		},
		"seq": func() []layers.Layer {
			return []layers.Layer{layers.Input(9, 2),
				layers.Conv1D(3, 2, layers.Padding("same"), layers.Strides(2), layers.ReLU),
				layers.AveragePooling1D(layers.Padding("same")),
				layers.Conv1D(4, 2, layers.DilationRate(2), layers.Softmax),
				layers.MaxPooling1D(layers.PoolSize(1)),
				layers.LayerNormalization(),
				layers.Flatten(),
				layers.Reshape([]int{2, -1}),
				layers.GlobalAveragePooling1D(),
				layers.Dense(3, layers.WithoutBias(), layers.Tanh),
			}
		},
		"seq2": func() []layers.Layer {
			return []layers.Layer{layers.Input(6, 2), layers.Conv1D(2, 3), layers.GlobalMaxPooling1D()}
		},
		"embedding": func() []layers.Layer {
			return []layers.Layer{layers.Input(5), layers.Embedding(10, 3), layers.Flatten(), layers.Reshape([]int{3, 5}),
				layers.GlobalMaxPooling1D(), layers.NewActivation(layers.ReLU), layers.NewActivation(layers.Sigmoid),
				layers.NewActivation(layers.Tanh), layers.NewActivation(layers.Linear), layers.Dense(4)}
		},
		"recurrent": func() []layers.Layer {
			return []layers.Layer{layers.Input(6, 3), layers.LSTM(4, layers.ReturnSequences()),
				layers.GRU(3, layers.GoBackwards(), layers.ReturnSequences(), layers.RecurrentActivation(layers.HardSigmoid)),
				layers.Bidirectional(layers.SimpleRNN(2, layers.ReLU), layers.MergeMode("sum")), layers.Dense(2)}
		},
		"identity": func() []layers.Layer { return []layers.Layer{layers.Input(3), layers.Dropout(0.5)} },
		"later input": func() []layers.Layer {
			return []layers.Layer{layers.Dense(2, layers.Named("first")), layers.Input(2), layers.Dense(1)}
		},
	}
}

// goldenSHA256 are the SHA-256 sums of the files goldenModels export to,
// recorded from the exporter as it was in package nn (ExportONNX), before
// it moved here: the move changed no byte; "recurrent"'s when the
// recurrent layers' mapping was written (issue 30).
var goldenSHA256 = map[string]string{
	"cnn":         "478043b31479a5fac5623ec43c7a706827ce5e5ade7e7dc1bf3aadd2e868ca69",
	"images":      "0e5d99a2263995a43d70c1a0bf57029daff0ec54807cbe8df0dd08dda5099df5",
	"seq":         "c9ae7c81df8bcf553f4561e860534327512dd82900a50dea9a5e2f53b73baca3",
	"seq2":        "8de06db0f8fec413427dbe2a230f1ee2649e767c10f6e023362f42b511991a7b",
	"embedding":   "8e7f3a0cf60e5583405a65407a3367fd2fcf59d2cdacbc867bc8866611af1464",
	"recurrent":   "cd7f1103bb2a461c7e3bfdabde353544f7a4941ada67a33622d596d30a0734df",
	"identity":    "f3d0a393f315ed3bbc38ed30f8a08ffa4678f606b005cc1aa3d84ca8f89acd5a",
	"later input": "89b4108387df72b83eddf2592368b6d0dbdfa79d560fb0dcb4016af16b31a853",
}

// TestExportONNXBytesStayTheSame exports each golden model and compares
// the file's SHA-256 with the recorded one.
func TestExportONNXBytesStayTheSame(t *testing.T) {
	for name, ls := range goldenModels() {
		t.Run(name, func(t *testing.T) {
			m := nn.NewSequential(ls()...)
			m.SetSeed(7)
			if m.InputShape() == nil {
				if err := m.Build(3); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(t.TempDir(), "m.onnx")
			if err := ExportFile(m, path); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			got := hex.EncodeToString(sum[:])
			if want := goldenSHA256[name]; got != want {
				t.Errorf("%d bytes of SHA-256 %s, want %s", len(b), got, want)
			}
		})
	}
}
