package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The example makes its demo folder of PNG images, then trains on it with
// a validation subset and augmentation, and learns the three shapes well
// above chance.
func TestTrainsOnAFolderOfImages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	if err := run(context.Background(), []string{"--make-demo", dir, "--demo-images", "100"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--dir", dir, "--epochs", "12", "--device", "/CPU:0"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"Found 300 files belonging to 3 classes ([discs squares stripes])", "Using 240 files for training, 60 for validation",
		"rescaling (Rescaling)", "random_flip (RandomFlip)", "random_translation (RandomT"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output has no %q:\n%s", want, text)
		}
	}
	m := regexp.MustCompile(`validation accuracy after 12 epochs: (\d\.\d+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no validation accuracy:\n%s", text)
	}
	if acc, _ := strconv.ParseFloat(m[1], 64); acc < 0.5 {
		t.Errorf("validation accuracy %v on three shapes, want at least 0.5 (chance is 1/3)", acc)
	}
	if err := run(context.Background(), []string{"--make-demo", dir}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("--make-demo into a full folder: %v", err)
	}
	if err := run(context.Background(), nil, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--make-demo") {
		t.Errorf("no --dir: %v", err)
	}
}
