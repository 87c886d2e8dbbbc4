package nn_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/gokeras/gokeras/nn"
)

// noter adds a figure to the epoch's logs and writes a message, as
// ReduceLROnPlateau does with "lr".
type noter struct{ nn.CallbackBase }

func (n *noter) OnEpochEnd(epoch int, logs nn.Logs) error {
	logs["lr"] = 0.1
	fmt.Fprintf(n.Params.Output, "note %d\n", epoch+1)
	return nil
}

// TestFitProgress checks the lines the progress callback Fit adds write:
// Keras' header and epoch lines, the figures Fit computed in their order
// (not those callbacks add), callbacks' messages after the line.
func TestFitProgress(t *testing.T) {
	const (
		figures = ` - loss: \d\.\d{4} - accuracy: \d\.\d{4}`
		val     = ` - val_loss: \d\.\d{4} - val_accuracy: \d\.\d{4}`
		line1   = `3/3 \[={30}\] - \d+s \d+(s|ms|us)/step` + figures
		line2   = `3/3 - \d+s` + figures + ` - \d+(s|ms|us)/epoch - \d+(s|ms|us)/step`
	)
	tests := []struct {
		name string
		opts []nn.Option
		want string // a regular expression for the whole output
	}{
		{"verbose 0", []nn.Option{nn.Verbose(0)}, `^$`},
		{"verbose 1", nil, `^Epoch 1/2\n` + line1 + `\nEpoch 2/2\n` + line1 + `\n$`},
		{"verbose 2", []nn.Option{nn.Verbose(2)}, `^Epoch 1/2\n` + line2 + `\nEpoch 2/2\n` + line2 + `\n$`},
		{"throughput", []nn.Option{nn.ShowThroughput()}, `^Epoch 1/2\n` + line1 + ` - \d+ samples/s\nEpoch 2/2\n` + line1 + ` - \d+ samples/s\n$`},
		{"validation", []nn.Option{nn.ValidationSplit(0.2)}, `^Epoch 1/2\n2/2 \[={30}\] - \d+s \d+(s|ms|us)/step` + figures + val + `\nEpoch 2/2\n`},
		{"callbacks' figures and messages", []nn.Option{nn.Callbacks(&noter{})},
			`^Epoch 1/2\n` + line1 + `\nnote 1\nEpoch 2/2\n` + line1 + `\nnote 2\n$`},
		{"a callback and verbose 0", []nn.Option{nn.Verbose(0), nn.Callbacks(&noter{})}, `^note 1\nnote 2\n$`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			opts := append([]nn.Option{nn.Epochs(2), nn.Seed(1), nn.Output(&out)}, tc.opts...)
			if _, err := tinyModel(t, 0.1).Fit(context.Background(), blobs(t, 70, 4, 1, true), opts...); err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(tc.want).MatchString(out.String()) {
				t.Errorf("output:\n%q\nwant it to match:\n%s", out.String(), tc.want)
			}
		})
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

func TestFitProgressWriteErrorStopsFit(t *testing.T) {
	_, err := tinyModel(t, 0.1).Fit(context.Background(), blobs(t, 70, 4, 1, true), nn.Output(failingWriter{}))
	if err == nil || !regexp.MustCompile(`^fit: epoch 1/1: writing progress: disk full$`).MatchString(err.Error()) {
		t.Errorf("error %v, want fit: epoch 1/1: writing progress: disk full", err)
	}
}
