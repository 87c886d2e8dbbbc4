package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
)

// TestExampleOnTinyCopy runs the example for one epoch on a CIFAR-10 copy
// in the real format with 10 records per batch file and checks what it
// prints and saves.
func TestExampleOnTinyCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), cifar10test.BatchesDir)
	cifar10test.WriteDir(t, dir, cifar10test.Files(10))
	save := filepath.Join(t.TempDir(), "saved_models")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"--device=/CPU:0", "--epochs", "1", "--data", dir, "--save-dir", save}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, re := range []string{
		`(?m)^x_train shape: \(50, 32, 32, 3\)$`,
		`(?m)^50 train samples$`,
		`(?m)^Total params: 1,250,858$`,
		`(?m)^ activation \(Activation\)`,
		`(?m)^Not using data augmentation\.$`,
		// Keras prints a figure of exactly 0 as 0.0000e+00.
		`(?m)^2/2 \[={30}\] - .* - loss: \d\.\d{4} - accuracy: (\d\.\d{4}|0\.0000e\+00) - val_loss: \d\.\d{4} - val_accuracy: (\d\.\d{4}|0\.0000e\+00)$`,
		`(?m)^Saved trained model at .*keras_cifar10_trained_model\.safetensors $`,
		`(?m)^Test loss: \d`,
		`(?m)^Test accuracy: \d`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the output lacks %s:\n%s", re, out)
		}
	}
	if _, err := os.Stat(filepath.Join(save, "keras_cifar10_trained_model.safetensors")); err != nil {
		t.Errorf("no weights saved: %v", err)
	}
	if strings.Contains(out, "NaN") {
		t.Errorf("a NaN in the output:\n%s", out)
	}
}
