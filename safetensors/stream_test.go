package safetensors

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// A stream of unknown length is read as a file is: check sees the
// declared tensors before their data is read (and can refuse them), and
// bytes after the data are refused.
func TestReadCheckedStream(t *testing.T) {
	var buf bytes.Buffer
	ts := []Tensor{{Name: "a", Shape: []int{2}, Data: []float32{1, 2}}, {Name: "b", Shape: []int{1}, Data: []float32{3}}}
	if err := Write(&buf, ts, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	var seen []Declared
	f, err := ReadChecked(bytes.NewReader(buf.Bytes()), -1, func(meta map[string]string, d []Declared) error {
		seen = d
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Values != 2 || len(f.Tensors) != 2 || f.Tensors[1].Data[0] != 3 || f.Metadata["k"] != "v" {
		t.Errorf("read %+v, declared %+v", f, seen)
	}
	refuse := errors.New("too big")
	// The check refuses before the data: a reader that fails on the data
	// is never read that far.
	header := buf.Bytes()[:buf.Len()-12]
	if _, err := ReadChecked(bytes.NewReader(header), -1, func(map[string]string, []Declared) error { return refuse }); !errors.Is(err, refuse) {
		t.Errorf("a refusing check: %v", err)
	}
	if _, err := ReadChecked(bytes.NewReader(header), -1, nil); err == nil || !strings.Contains(err.Error(), "reading tensor") {
		t.Errorf("a truncated stream: %v", err)
	}
	extra := append(bytes.Clone(buf.Bytes()), 0)
	if _, err := ReadChecked(bytes.NewReader(extra), -1, nil); err == nil || !strings.Contains(err.Error(), "more bytes follow") {
		t.Errorf("a byte after the data: %v", err)
	}
}
