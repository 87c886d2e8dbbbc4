package callbacks

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/metrics"
	"testing"
)

// fuzzEventFile is an event file as the TensorBoard callback writes one:
// the file_version record, epoch scalars and a weight histogram.
func fuzzEventFile(tb testing.TB) []byte {
	tb.Helper()
	w, err := newEventWriter(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	h, ok := histogram([]float32{-0.5, 0.25, 0.25, 1, 3}, 4)
	if !ok {
		tb.Fatal("no histogram")
	}
	for _, e := range []TensorBoardEvent{
		{WallTime: 1.7e9, Step: 0, Values: []TensorBoardValue{{Tag: "epoch_loss", SimpleValue: 0.75}, {Tag: "epoch_accuracy", SimpleValue: 0.5}}},
		{WallTime: 1.7e9 + 1, Step: 1, Values: []TensorBoardValue{{Tag: "epoch_loss", SimpleValue: 0.5}, {Tag: "dense/kernel_0", Histogram: h}}},
		{WallTime: 1.7e9 + 2, Step: 2, Values: []TensorBoardValue{{Tag: "epoch_learning_rate", SimpleValue: 0.01}}},
	} {
		if err := w.write(e); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.close(); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(w.path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Reading an event file may allocate fuzzAllocPerByte times its size,
// plus fuzzMaxAlloc: linear, as it must be. The worst case measured is
// 232 bytes a byte, for a Summary of empty values, 2 bytes each: a
// protowire.Field of 48 bytes and a TensorBoardValue of 32 for each, in
// slices grown by appending (1.25 times at a time when large, so about 5
// times their final size allocated in all). A record claiming more bytes
// than the file holds, read by allocating its claim, exceeds it.
const (
	fuzzAllocPerByte = 512
	fuzzMaxAlloc     = 1 << 20
)

// FuzzTensorBoardEvents feeds arbitrary files to ReadTensorBoardEvents,
// which reads TFRecord framing (lengths and masked CRC-32C checksums)
// around Event, Summary and HistogramProto messages. It must not panic,
// and it allocates no more than a small multiple of the file's size (a
// record that claims a huge length is refused without asking for it).
// Whatever events it returns, complete ones before an error included,
// written again by the package's writer (eventWriter) read back the same
// (up to what the writer leaves out: a zero wall time's sign, a
// histogram's simple_value), without an error, and writing those again
// gives the same bytes.
//
// The seed corpus is an event file eventWriter writes (made at the start)
// and testdata/fuzz/FuzzTensorBoardEvents, which holds files the
// TensorBoard callback wrote during Fit (one cut short) and the headers of
// records claiming 2^30 bytes (the most allowed) and 2^30+1; run longer
// with
//
//	go test -run XXX -fuzz FuzzTensorBoardEvents -fuzztime 20s -fuzzminimizetime 0s ./callbacks
func FuzzTensorBoardEvents(f *testing.F) {
	f.Add(fuzzEventFile(f))
	dir := f.TempDir()
	in, out := fuzzOpen(f, filepath.Join(dir, "in.tfevents")), fuzzOpen(f, filepath.Join(dir, "out.tfevents"))
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzPut(t, in, data)
		metrics.Read(allocs)
		before := allocs[0].Value.Uint64()
		events, _ := ReadTensorBoardEvents(in.Name())
		metrics.Read(allocs)
		if n := allocs[0].Value.Uint64() - before; n > fuzzMaxAlloc+fuzzAllocPerByte*uint64(len(data)) {
			t.Fatalf("reading a file of %d bytes allocated %d bytes", len(data), n)
		}

		written := fuzzWriteEvents(t, events)
		fuzzPut(t, out, written)
		again, err := ReadTensorBoardEvents(out.Name())
		if err != nil {
			t.Fatalf("the events read, written again, are refused: %v", err)
		}
		if got, want := canonicalEvents(again), canonicalEvents(events); got != want {
			t.Fatalf("written and read back:\n got %s\nwant %s", got, want)
		}
		if rewritten := fuzzWriteEvents(t, again); !bytes.Equal(rewritten, written) {
			t.Fatalf("writing the events read back gives other bytes:\n%x\n%x", rewritten, written)
		}
	})
}

// fuzzOpen creates a file that stays open for the whole fuzzing run.
func fuzzOpen(f *testing.F, path string) *os.File {
	file, err := os.Create(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { file.Close() })
	return file
}

// fuzzPut makes b the content of the open file. It writes over the file
// and cuts it to size, which is ~50 times faster on ext4 than truncating
// it first: a file truncated to zero and written again is flushed to disk.
func fuzzPut(t *testing.T, file *os.File, b []byte) {
	t.Helper()
	if _, err := file.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := file.Truncate(int64(len(b))); err != nil {
		t.Fatal(err)
	}
}

// fuzzWriteEvents writes the events with eventWriter, as the TensorBoard
// callback does (without the file_version record that newEventWriter
// adds), and returns what it wrote.
func fuzzWriteEvents(t *testing.T, events []TensorBoardEvent) []byte {
	t.Helper()
	var b bytes.Buffer
	w := &eventWriter{path: "fuzz", w: bufio.NewWriter(&b)}
	for _, e := range events {
		if err := w.write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// canonicalEvents prints events as the writer carries them: a zero wall
// time without its sign, a histogram's value without a simple_value, and
// floats by their bits, so that a NaN equals itself.
func canonicalEvents(events []TensorBoardEvent) string {
	var b bytes.Buffer
	for _, e := range events {
		wall := math.Float64bits(e.WallTime)
		if e.WallTime == 0 {
			wall = 0
		}
		fmt.Fprintf(&b, "{wall %x step %d version %q [", wall, e.Step, e.FileVersion)
		for _, v := range e.Values {
			if h := v.Histogram; h != nil {
				fmt.Fprintf(&b, "{%q histo %x %x %x %x %x limits %x buckets %x}", v.Tag,
					math.Float64bits(h.Min), math.Float64bits(h.Max), math.Float64bits(h.Num), math.Float64bits(h.Sum), math.Float64bits(h.SumSquares),
					doubleBits(h.BucketLimit), doubleBits(h.Bucket))
			} else {
				fmt.Fprintf(&b, "{%q %x}", v.Tag, math.Float32bits(v.SimpleValue))
			}
		}
		b.WriteString("]}\n")
	}
	return b.String()
}

func doubleBits(vs []float64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}
