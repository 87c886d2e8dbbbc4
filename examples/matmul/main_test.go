package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device"
	"gorgonia.org/tensor"
)

func TestSweepPrintsATableAndAChart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.png")
	var out, errOut bytes.Buffer
	if err := run([]string{"-max", "200", "-reps", "2", "-png", path}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	text := out.String()
	gpus, err := device.ListPhysicalDevices(device.GPU)
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) == 0 && !strings.Contains(text, "No GPU: ") {
		t.Errorf("without a GPU the sweep must say so:\n%s", text)
	}
	if !strings.Contains(text, "BLAS on the CPU: ") {
		t.Errorf("no BLAS line:\n%s", text)
	}
	dur := `\d+(\.\d+)?(ns|µs|ms|s)`
	for _, n := range []string{"100", "200"} {
		row := regexp.MustCompile(`(?m)^/CPU:0 +` + n + ` +` + dur + ` +` + dur + ` +` + dur + ` +\d+\.\d +` + dur + ` +` + dur + `$`)
		if !row.MatchString(text) {
			t.Errorf("no CPU row for n=%s:\n%s", n, text)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("the chart is not a PNG: %v", err)
	}
}

func TestSizes(t *testing.T) {
	tests := []struct {
		max  int
		want []int
	}{
		{2000, []int{100, 200, 500, 1000, 2000}},
		{8000, []int{100, 200, 500, 1000, 2000, 5000, 8000}},
		{300, []int{100, 200, 300}},
		{50, []int{50}},
	}
	for _, tc := range tests {
		if got := sizes(tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("sizes(%d) = %v, want %v", tc.max, got, tc.want)
		}
	}
}

func TestCheckProductCatchesAWrongProduct(t *testing.T) {
	// A = [[1 2] [3 4]], B = [[5 6] [7 8]]: A·B = [[19 22] [43 50]].
	a := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4}))
	b := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{5, 6, 7, 8}))
	good := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{19, 22, 43, 50}))
	if err := checkProduct(a, b, good, 2); err != nil {
		t.Errorf("the right product was rejected: %v", err)
	}
	bad := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{19, 22, 43, 51}))
	if err := checkProduct(a, b, bad, 2); err == nil || !strings.Contains(err.Error(), "C[1][1] = 51, want 50") {
		t.Errorf("a wrong product: %v", err)
	}
}

func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-max", "0"}, "-max must be at least 1"},
		{[]string{"-reps", "0"}, "-reps must be at least 1"},
		{[]string{"-device", "/TPU:0"}, "-device"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		err := run(tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("matmul %v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}
