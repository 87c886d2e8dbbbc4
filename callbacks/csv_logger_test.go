package callbacks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/nn"
)

func TestCSVLoggerWritesWhatKerasWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.csv")
	m := tinyModel(t, 0.1)
	logger := callbacks.NewCSVLogger(path)
	hist, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(2), nn.Verbose(0),
		nn.ValidationData(blobs(t, 20, 2)), nn.Callbacks(logger))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("epoch,accuracy,loss,val_accuracy,val_loss\r\n")
	for e := range 2 {
		fmt.Fprintf(&want, "%d,%s,%s,%s,%s\r\n", e, py(hist.Get("accuracy")[e]), py(hist.Get("loss")[e]),
			py(hist.Get("val_accuracy")[e]), py(hist.Get("val_loss")[e]))
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Errorf("CSV:\n%q\nwant:\n%q", got, want.String())
	}
	// Append keeps the rows and writes no second header.
	logger = callbacks.NewCSVLogger(path)
	logger.Append = true
	if _, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Verbose(0), nn.ValidationData(blobs(t, 20, 2)), nn.Callbacks(logger)); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(again), "\r\n"), "\r\n")
	if len(lines) != 4 || !strings.HasPrefix(string(again), string(got)) || !strings.HasPrefix(lines[3], "0,") {
		t.Errorf("appended CSV:\n%q", again)
	}
}

// py is Python's repr of a float, as written by hand for the few values
// these tests need: Go's shortest formatting plus ".0" for whole numbers.
func py(x float64) string {
	s := fmt.Sprint(x)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
