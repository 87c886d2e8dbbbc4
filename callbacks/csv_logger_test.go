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

// With ResumeEpoch, an appended file's rows of that epoch and later are
// replaced by the resumed run's: a run resumed from a checkpoint older than
// the log (its save failed) once logged the epochs it redid twice.
func TestCSVLoggerResumeEpochReplacesRedoneEpochs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.csv")
	m := tinyModel(t, 0.1)
	first := callbacks.NewCSVLogger(path)
	if _, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(3), nn.Verbose(0), nn.Callbacks(first)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	rows := strings.SplitAfter(string(before), "\r\n") // header, epochs 0, 1, 2, ""
	for _, tc := range []struct {
		resume int
		keep   int // lines of the old file kept: the header and epochs before resume
	}{
		{0, 4},
		{1, 2},
		{2, 3},
		{5, 4},
	} {
		if err := os.WriteFile(path, before, 0o644); err != nil {
			t.Fatal(err)
		}
		logger := callbacks.NewCSVLogger(path)
		logger.Append, logger.ResumeEpoch = true, tc.resume
		if _, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(tc.resume+1), nn.InitialEpoch(tc.resume), nn.Verbose(0), nn.Callbacks(logger)); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		lines := strings.SplitAfter(string(got), "\r\n")
		want := strings.Join(rows[:tc.keep], "")
		if !strings.HasPrefix(string(got), want) || len(lines) != tc.keep+2 || !strings.HasPrefix(lines[tc.keep], fmt.Sprintf("%d,", tc.resume)) {
			t.Errorf("ResumeEpoch %d: log\n%q\nwant the old file's first %d lines, then epoch %d's row", tc.resume, got, tc.keep, tc.resume)
		}
	}
}
