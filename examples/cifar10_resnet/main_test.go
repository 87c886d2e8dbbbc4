package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
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
		`(?m)^Total params: 274,442$`,
		`(?m)^Non-trainable params: 1,376$`,
		`(?m)^ add \(Add\) `,
		`(?m)^ResNet20v1$`,
		`(?m)^Not using data augmentation\.$`,
		`(?m)^2/2 \[={30}\] - .* - loss: \d+\.\d{4} - accuracy: .* - val_loss: .* - val_accuracy: .*`,
		`(?m)^Test loss: \d`,
		`(?m)^Test accuracy: \d`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the output has no line matching %s:\n%s", re, out)
		}
	}
	if _, err := os.Stat(filepath.Join(save, "cifar10_ResNet20v1_model.safetensors")); err != nil {
		t.Errorf("the best weights were not saved: %v", err)
	}
}
