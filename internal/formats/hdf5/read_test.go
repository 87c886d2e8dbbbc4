package hdf5

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readFile(t *testing.T, path string) *File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// arange is what make_fixtures.py stores: arange(35).reshape(5, 7)/4 - 3.
func arange() []float32 {
	v := make([]float32, 35)
	for i := range v {
		v[i] = float32(i)/4 - 3
	}
	return v
}

func wantAttr(t *testing.T, o interface{ Attr(string) (any, error) }, name string, want any) {
	t.Helper()
	got, err := o.Attr(name)
	if err != nil {
		t.Errorf("attribute %q: %v", name, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("attribute %q = %#v, want %#v", name, got, want)
	}
}

func wantData(t *testing.T, g *Group, path string, shape []int, want []float32) {
	t.Helper()
	d, err := g.Dataset(path)
	if err != nil {
		t.Error(err)
		return
	}
	if !reflect.DeepEqual(d.Shape(), shape) {
		t.Errorf("%s: shape %v, want %v", path, d.Shape(), shape)
	}
	got, err := d.Float32()
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", path, got, want)
	}
}

func checkDefault(t *testing.T, f *File) {
	r := f.Root()
	wantAttr(t, r, "keras_version", "2.15.0")
	wantAttr(t, r, "backend", "tensorflow")
	wantAttr(t, r, "model_config", `{"class_name": "Sequential", "name": "é"}`)
	if got := r.Names(); !reflect.DeepEqual(got, []string{"d0", "model_weights", "ordered"}) {
		t.Errorf("root members %q", got)
	}
	g, err := r.Group("model_weights")
	if err != nil {
		t.Fatal(err)
	}
	wantAttr(t, g, "layer_names", []string{"dense", "conv2d_1"})
	wantAttr(t, g, "vlen_names", []string{"a", "bc", ""})
	wantAttr(t, g, "epsilon", 1e-7)
	wantAttr(t, g, "counts", []int64{1, -2, 3})
	a := arange()
	wantData(t, g, "dense/dense/kernel:0", []int{5, 7}, a)
	wantData(t, g, "dense/dense/bias:0", []int{2}, []float32{0.5, -1})
	for _, name := range []string{"gzip", "shuffle", "chunked"} {
		wantData(t, g, "conv2d_1/conv2d_1/"+name, []int{5, 7}, a)
	}
	wantData(t, g, "conv2d_1/conv2d_1/iterations", []int{}, []float32{42})
	wantData(t, g, "conv2d_1/conv2d_1/scalar", []int{}, []float32{2.5})
	wantData(t, g, "conv2d_1/conv2d_1/empty", []int{0, 3}, []float32{})
	if d, _ := g.Dataset("conv2d_1/conv2d_1/iterations"); d == nil || d.DType() != "int64" {
		t.Errorf("iterations is not int64")
	}
	o, err := r.Group("ordered")
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Names(); !reflect.DeepEqual(got, []string{"z", "a"}) {
		t.Errorf("track_order group lists %q, want creation order [z a]", got)
	}
	wantData(t, o, "z", []int{2}, []float32{1, 2})
	oa, _ := o.Group("a")
	if oa != nil {
		wantAttr(t, oa, "note", "space  ") // NUL-padded: the spaces are data
	}
	deep, err := r.Group("d0/d1/d2/d3/d4/d5")
	if err != nil {
		t.Fatal(err)
	}
	wantAttr(t, deep, "depth", int64(6))
	if _, err := r.Group("d0/nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing group: %v, want ErrNotFound", err)
	}
	if _, err := r.Attr("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing attribute: %v, want ErrNotFound", err)
	}
}

func checkLatest(t *testing.T, f *File) {
	r := f.Root()
	wantAttr(t, r, "keras_version", "3.3.3")
	wantAttr(t, r, "names", []string{"x", "yy"})
	g, err := r.Group("layers/dense")
	if err != nil {
		t.Fatal(err)
	}
	wantAttr(t, g, "n", int64(-5))
	wantData(t, g, "vars/0", []int{5, 7}, arange())
	d, err := r.Dataset("v4")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Float32(); !errors.Is(err, ErrUnsupported) {
		t.Errorf("layout version 4: %v, want ErrUnsupported", err)
	}
}

// TestFixtures reads the committed files h5py made (testdata/make_fixtures.py).
func TestFixtures(t *testing.T) {
	checkDefault(t, readFile(t, "testdata/default.h5"))
	checkLatest(t, readFile(t, "testdata/latest.h5"))
}

// TestH5pyFiles makes the fixtures afresh with the h5py installed here.
func TestH5pyFiles(t *testing.T) {
	py := h5pyPython(t)
	dir := t.TempDir()
	if out, err := exec.Command(py, "testdata/make_fixtures.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("make_fixtures.py: %v\n%s", err, out)
	}
	checkDefault(t, readFile(t, filepath.Join(dir, "default.h5")))
	checkLatest(t, readFile(t, filepath.Join(dir, "latest.h5")))
}

// TestRoundTrip reads back what the writer writes.
func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if _, err := keraslike().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Root()
	wantAttr(t, r, "keras_version", "2.15.0")
	wantAttr(t, r, "model_config", `{"class_name": "Sequential", "config": {"name": "s"}}`)
	g, err := r.Group("model_weights")
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Group("many")
	if err != nil || len(m.Names()) != 22 {
		t.Fatalf("/many: %v, %d members", err, len(m.Names()))
	}
	l7, _ := m.Group("l07")
	wantAttr(t, l7, "i", int64(7))
	if _, err := m.Group(strings.Repeat("n", 300)); err != nil {
		t.Error(err)
	}
	big := make([]float32, 3000)
	for i := range big {
		big[i] = float32(i) * 0.5
	}
	wantData(t, m, "big", []int{10, 20, 15}, big)
	if got := g.Names(); !reflect.DeepEqual(got, []string{"dense", "dense_1", "flatten", "scalar", "empty"}) {
		t.Errorf("members %q", got)
	}
	wantAttr(t, g, "layer_names", []string{"dense", "dense_1", "flatten"})
	d, _ := g.Group("dense")
	wantAttr(t, d, "weight_names", []string{"dense/kernel:0", "dense/bias:0"})
	f1, _ := g.Group("flatten")
	wantAttr(t, f1, "weight_names", []string{})
	wantData(t, g, "dense/dense/kernel:0", []int{2, 3}, []float32{1, 2, 3, 4, 5, -6.5})
	wantData(t, g, "dense/dense/bias:0", []int{3}, []float32{0.5, 0, -1})
	wantData(t, g, "dense_1/dense_1/kernel:0", []int{1, 2, 2, 1}, []float32{1e-7, 2e7, -3, 4})
	wantData(t, g, "scalar", []int{}, []float32{7})
	wantData(t, g, "empty", []int{0, 4}, []float32{})
	s, _ := g.Dataset("scalar")
	wantAttr(t, s, "count", int64(-3))
	wantAttr(t, s, "lr", 0.01)
	wantAttr(t, s, "xs", []float64{1, 2})
}

// TestWriterMistakes: what cannot be written is an error from WriteTo.
func TestWriterMistakes(t *testing.T) {
	long := make([]string, 5000)
	for i := range long {
		long[i] = "layer_with_a_long_name"
	}
	for name, build := range map[string]func(w *Writer){
		"shape":      func(w *Writer) { w.Root().Dataset("k", []int{2, 2}, []float32{1}) },
		"duplicate":  func(w *Writer) { w.Root().Dataset("k", nil, []float32{1}); w.Root().Dataset("k", nil, []float32{1}) },
		"slash":      func(w *Writer) { w.Root().Group("a/b") },
		"type":       func(w *Writer) { w.Root().Attr("x", []int{1}) },
		"under data": func(w *Writer) { w.Root().Dataset("k", nil, []float32{1}).Group("g") },
		"negative":   func(w *Writer) { w.Root().Dataset("k", []int{-1}, nil) },
		"big attr":   func(w *Writer) { w.Root().Attr("layer_names", long) },
		"group/data": func(w *Writer) { w.Root().Dataset("k", nil, []float32{1}); w.Root().Group("k") },
		"empty name": func(w *Writer) { w.Root().Group("") },
		"attr name":  func(w *Writer) { w.Root().Attr("", "x") },
	} {
		w := NewWriter()
		build(w)
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); !errors.Is(err, ErrWrite) {
			t.Errorf("%s: %v, want ErrWrite", name, err)
		} else if buf.Len() != 0 {
			t.Errorf("%s: wrote %d bytes before failing", name, buf.Len())
		}
	}
}
