package hdf5

import (
	"bytes"
	"testing"
)

// FuzzRead feeds arbitrary bytes to Read and reads every attribute and
// dataset of what it accepts. It must not panic, and a dataset read
// without error holds exactly as many values as its shape. Seeds: the
// h5py-made fixtures and a file the writer wrote; run longer with
//
//	go test -run XXX -fuzz FuzzRead -fuzztime 20s -fuzzminimizetime 0s ./internal/formats/hdf5
func FuzzRead(f *testing.F) {
	f.Add(mustFixture(f, "default.h5"))
	f.Add(mustFixture(f, "latest.h5"))
	var buf bytes.Buffer
	if _, err := keraslike().WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := readBytes(b)
		if err != nil {
			return
		}
		_ = visit(t, file.Root(), 0)
	})
}
