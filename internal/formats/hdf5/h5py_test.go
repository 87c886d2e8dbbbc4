package hdf5

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// h5pyPython returns a python3 that imports h5py (Debian's python3-h5py
// lives under /usr/bin/python3, which a pyenv shim may hide), or skips.
func h5pyPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import h5py").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with h5py (apt-get install python3-h5py); the committed fixtures under testdata still run")
	return ""
}

// keraslike builds what Keras 2's save_weights writes, in small.
func keraslike() *Writer {
	w := NewWriter()
	r := w.Root()
	r.Attr("keras_version", "2.15.0").Attr("backend", "tensorflow")
	r.Attr("model_config", `{"class_name": "Sequential", "config": {"name": "s"}}`)
	g := r.Group("model_weights")
	g.Attr("layer_names", []string{"dense", "dense_1", "flatten"})
	g.Attr("backend", "tensorflow")
	d := g.Group("dense")
	d.Attr("weight_names", []string{"dense/kernel:0", "dense/bias:0"})
	d.Group("dense").Dataset("kernel:0", []int{2, 3}, []float32{1, 2, 3, 4, 5, -6.5})
	d.Group("dense").Dataset("bias:0", []int{3}, []float32{0.5, 0, -1})
	d1 := g.Group("dense_1")
	d1.Attr("weight_names", []string{"dense_1/kernel:0"})
	d1.Group("dense_1").Dataset("kernel:0", []int{1, 2, 2, 1}, []float32{1e-7, 2e7, -3, 4})
	g.Group("flatten").Attr("weight_names", []string{})
	g.Dataset("scalar", nil, []float32{7}).Attr("count", int64(-3)).Attr("lr", 0.01).Attr("xs", []float32{1, 2})
	g.Dataset("empty", []int{0, 4}, nil)
	many := r.Group("many") // more links than libhdf5 keeps compact by default
	for i := range 20 {
		many.Group(fmt.Sprintf("l%02d", i)).Attr("i", int64(i))
	}
	many.Group(strings.Repeat("n", 300))
	big := make([]float32, 3000)
	for i := range big {
		big[i] = float32(i) * 0.5
	}
	many.Dataset("big", []int{10, 20, 15}, big)
	return w
}

// TestH5pyReadsWriter writes a Keras-like file and checks in h5py every
// value, attribute and the group layout.
func TestH5pyReadsWriter(t *testing.T) {
	py := h5pyPython(t)
	var buf bytes.Buffer
	if _, err := keraslike().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.h5")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
a = f.attrs
assert a["keras_version"] == b"2.15.0", a["keras_version"]
assert a["backend"] == b"tensorflow"
assert a["model_config"] == b'{"class_name": "Sequential", "config": {"name": "s"}}'
g = f["model_weights"]
assert list(g.attrs["layer_names"]) == [b"dense", b"dense_1", b"flatten"], g.attrs["layer_names"]
assert sorted(g.keys()) == ["dense", "dense_1", "empty", "flatten", "scalar"], list(g.keys())
assert list(g["dense"].attrs["weight_names"]) == [b"dense/kernel:0", b"dense/bias:0"]
k = g["dense/dense/kernel:0"]
assert k.dtype == np.float32 and k.shape == (2, 3)
assert (k[()] == np.array([[1, 2, 3], [4, 5, -6.5]], np.float32)).all()
assert (g["dense/dense/bias:0"][()] == np.array([0.5, 0, -1], np.float32)).all()
k1 = g["dense_1/dense_1/kernel:0"][()]
assert k1.shape == (1, 2, 2, 1) and (k1.ravel() == np.array([1e-7, 2e7, -3, 4], np.float32)).all()
assert len(g["flatten"].attrs["weight_names"]) == 0
s = g["scalar"]
assert s.shape == () and s[()] == 7
assert s.attrs["count"] == -3 and s.attrs["lr"] == 0.01 and list(s.attrs["xs"]) == [1, 2]
assert g["empty"].shape == (0, 4)
m = f["many"]
assert len(m) == 22 and m["l07"].attrs["i"] == 7 and ("n" * 300) in m, list(m)
assert (m["big"][()].ravel() == np.arange(3000, dtype=np.float32) * 0.5).all()
print("ok")
`
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("h5py rejected the writer's file: %v\n%s", err, out)
	}
}

// varStrings has VarString attributes as Keras 3 names its vars groups,
// one longer than the smallest heap collection, one not ASCII.
func varStrings() (*Writer, map[string]string) {
	want := map[string]string{
		"layers/dense/vars":   "dense",
		"layers/dense_1/vars": "dense_1",
		"layers/long/vars":    strings.Repeat("long name ", 500),
		"vars":                "modèle",
	}
	w := NewWriter()
	r := w.Root()
	r.Group("layers").Group("dense").Group("vars").Attr("name", VarString("dense")).Dataset("0", []int{2}, []float32{1, 2})
	r.Group("layers").Group("dense_1").Group("vars").Attr("name", VarString("dense_1"))
	r.Group("layers").Group("long").Group("vars").Attr("name", VarString(want["layers/long/vars"]))
	r.Group("vars").Attr("name", VarString(want["vars"])).Attr("fixed", "bytes")
	return w, want
}

// h5py reads a VarString as a str of a variable-length UTF-8 string
// type, as it reads what it writes for one; the reader of this package
// reads them back too.
func TestH5pyReadsVarStrings(t *testing.T) {
	w, want := varStrings()
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for path, s := range want {
		g, err := f.Root().Group(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := g.AttrString("name"); err != nil || got != s {
			t.Errorf("%s: name %.40q, %v; want %.40q", path, got, err, s)
		}
	}
	py := h5pyPython(t)
	path := filepath.Join(t.TempDir(), "v.h5")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, h5py
f = h5py.File(sys.argv[1], "r")
for path, want in [("layers/dense/vars", "dense"), ("layers/dense_1/vars", "dense_1"), ("layers/long/vars", "long name " * 500), ("vars", "modèle")]:
    a = f[path].attrs
    got = a["name"]
    assert isinstance(got, str) and got == want, (path, got[:40])
    info = h5py.check_string_dtype(a.get_id("name").dtype)
    assert info is not None and info.length is None and info.encoding == "utf-8", (path, info)
assert f["vars"].attrs["fixed"] == b"bytes"
assert list(f["layers/dense/vars/0"][()]) == [1, 2]
print("ok")
`
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("h5py rejected the writer's variable-length strings: %v\n%s", err, out)
	}
}

// int64 datasets, scalar and not, beside float32 ones: h5py reads them as
// int64, and so does the reader of this package.
func TestH5pyReadsInt64Datasets(t *testing.T) {
	w := NewWriter()
	v := w.Root().Group("optimizer").Group("vars")
	v.DatasetInt64("0", nil, []int64{1 << 40})
	v.Dataset("1", nil, []float32{0.5})
	v.DatasetInt64("2", []int{3}, []int64{-1, 0, 7})
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.Root().Group("optimizer/vars")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]float32{"0": {1 << 40}, "1": {0.5}, "2": {-1, 0, 7}} {
		d, err := g.Dataset(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Float32()
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("dataset %s: %v, %v; want %v", name, got, err, want)
		}
	}
	d, err := g.Dataset("0")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.Int64(); err != nil || len(got) != 1 || got[0] != 1<<40 {
		t.Errorf("Int64 of dataset 0: %v, %v; want [%d]", got, err, int64(1<<40))
	}
	if d, err := g.Dataset("1"); err != nil {
		t.Fatal(err)
	} else if _, err := d.Int64(); err == nil {
		t.Error("Int64 of a float32 dataset: no error")
	}
	py := h5pyPython(t)
	path := filepath.Join(t.TempDir(), "i.h5")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, h5py, numpy as np
v = h5py.File(sys.argv[1], "r")["optimizer/vars"]
assert v["0"].dtype == np.int64 and v["0"].shape == () and v["0"][()] == 1 << 40, v["0"]
assert v["1"].dtype == np.float32 and v["1"][()] == 0.5
assert v["2"].dtype == np.int64 and list(v["2"][()]) == [-1, 0, 7]
print("ok")
`
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("h5py rejected the writer's int64 datasets: %v\n%s", err, out)
	}
}
