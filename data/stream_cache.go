package data

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/gokeras/gokeras/internal/formats/shapes"
)

// Cache keeps the elements of the stream's first whole pass, as tf.data's
// cache(filename), and later passes read them instead of the stream (no
// generating, decoding or mapping again). With filename "" they are kept
// in memory; otherwise in that file, which then serves later runs of the
// program too. The file is written under a temporary name beside it and
// renamed once the pass has ended, so a pass stopped midway (an error, a
// Close, a program killed) leaves no cache to be read: the next pass
// writes it again. A file that holds samples of other shapes, or is not a
// cache, is an error naming it. Cache what comes before a Shuffle, so
// that each pass is still shuffled anew.
func (s *Stream) Cache(filename string) *Stream {
	var check error
	if s.Err() == nil && s.card == Infinite {
		check = errors.New("the stream never ends, so no pass of it can be kept: cache it before its Repeat(-1)")
	}
	d := s.derive("Cache", check)
	if d.err != nil {
		return d
	}
	c := &streamCache{s: s, file: filename, xs: shapes.Size(s.sample), ys: shapes.Size(s.label)}
	d.open = c.open
	return d
}

// streamCache is what a Cache keeps: the elements in memory, or the file.
type streamCache struct {
	s      *Stream
	file   string
	xs, ys int
	mu     sync.Mutex
	kept   []Batch // in memory, once a pass has ended
	filled bool
}

// cacheMagic begins a cache file; its version is its last byte.
const cacheMagic = "gokeras-stream-cache\x01"

func (c *streamCache) open(ctx context.Context) (Iterator, error) {
	c.mu.Lock()
	filled, kept := c.filled, c.kept
	c.mu.Unlock()
	if filled {
		return &replayIter{kept: kept}, nil
	}
	if c.file != "" {
		f, err := os.Open(c.file)
		switch {
		case err == nil:
			r := &fileIter{f: f, r: bufio.NewReaderSize(f, 1<<16), name: c.file, xs: c.xs, ys: c.ys}
			if err := r.readHeader(c.s.sample, c.s.label); err != nil {
				_ = f.Close()
				return nil, err
			}
			return r, nil
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("data.Stream.Cache: %w", err)
		}
	}
	src, err := c.s.open(ctx)
	if err != nil {
		return nil, err
	}
	w := &cacheWriter{c: c, src: src}
	if c.file != "" {
		tmp, err := os.CreateTemp(filepath.Dir(c.file), filepath.Base(c.file)+".tmp*")
		if err != nil {
			_ = src.Close()
			return nil, fmt.Errorf("data.Stream.Cache: making the cache file: %w", err)
		}
		w.tmp, w.w = tmp, bufio.NewWriterSize(tmp, 1<<16)
		if err := writeHeader(w.w, c.s.sample, c.s.label); err != nil {
			w.abandon()
			return nil, err
		}
	}
	return w, nil
}

// writeHeader writes the magic and the shapes.
func writeHeader(w io.Writer, sample, label []int) error {
	buf := []byte(cacheMagic)
	for _, shape := range [][]int{sample, label} {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(shape)))
		for _, d := range shape {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(d))
		}
	}
	_, err := w.Write(buf)
	return err
}

// cacheWriter is a first pass: it reads the stream and keeps what it
// reads, in memory or in the temporary file.
type cacheWriter struct {
	c    *streamCache
	src  Iterator
	kept []Batch
	tmp  *os.File
	w    *bufio.Writer
	buf  []byte
	done bool
}

func (w *cacheWriter) Next() (Batch, error) {
	if w.done {
		return Batch{}, io.EOF
	}
	b, err := w.src.Next()
	if err == io.EOF {
		w.done = true
		if err := w.commit(); err != nil {
			return Batch{}, err
		}
		return Batch{}, io.EOF
	}
	if err != nil {
		w.done = true
		w.abandon()
		return Batch{}, err
	}
	if b.N == 0 {
		return b, nil // nothing to keep (and 0 ends a cache file)
	}
	if w.tmp == nil {
		w.kept = append(w.kept, Batch{N: b.N, X: slices.Clone(b.X), Y: slices.Clone(b.Y)})
		return b, nil
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf[:0], uint32(b.N))
	for _, v := range [][]float32{b.X, b.Y} {
		w.buf, _ = binary.Append(w.buf, binary.LittleEndian, v)
	}
	if _, err := w.w.Write(w.buf); err != nil {
		w.done = true
		w.abandon()
		return Batch{}, fmt.Errorf("data.Stream.Cache: writing %s: %w", w.tmp.Name(), err)
	}
	return b, nil
}

// commit makes what the pass kept the cache: the elements in memory, or
// the file, ended by an element of no samples and renamed.
func (w *cacheWriter) commit() error {
	if w.tmp == nil {
		w.c.mu.Lock()
		w.c.kept, w.c.filled = w.kept, true
		w.c.mu.Unlock()
		return nil
	}
	tmp := w.tmp
	w.tmp = nil
	err := binary.Write(w.w, binary.LittleEndian, uint32(0))
	if err == nil {
		err = w.w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), w.c.file)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("data.Stream.Cache: writing %s: %w", w.c.file, err)
	}
	return nil
}

// abandon removes the temporary file of a pass that did not end.
func (w *cacheWriter) abandon() {
	if w.tmp != nil {
		_ = w.tmp.Close()
		_ = os.Remove(w.tmp.Name())
		w.tmp = nil
	}
	w.kept = nil
}

func (w *cacheWriter) Close() error {
	w.done = true
	w.abandon()
	return w.src.Close()
}

// replayIter reads the elements kept in memory.
type replayIter struct {
	kept []Batch
	i    int
}

func (r *replayIter) Next() (Batch, error) {
	if r.i >= len(r.kept) {
		return Batch{}, io.EOF
	}
	b := r.kept[r.i]
	r.i++
	return Batch{N: b.N, X: slices.Clone(b.X), Y: slices.Clone(b.Y)}, nil
}

func (r *replayIter) Close() error { r.i = len(r.kept); return nil }

// fileIter reads a cache file.
type fileIter struct {
	f      *os.File
	r      *bufio.Reader
	name   string
	xs, ys int
	done   bool
}

// readHeader checks the file's magic and shapes against the stream's.
func (f *fileIter) readHeader(sample, label []int) error {
	magic := make([]byte, len(cacheMagic))
	if _, err := io.ReadFull(f.r, magic); err != nil || string(magic) != cacheMagic {
		return fmt.Errorf("data.Stream.Cache: %s is not a stream cache gokeras wrote: give another file name, or delete it", f.name)
	}
	for k, want := range [][]int{sample, label} {
		var rank uint32
		if err := binary.Read(f.r, binary.LittleEndian, &rank); err != nil || rank > 64 {
			return fmt.Errorf("data.Stream.Cache: %s: a damaged header: delete it", f.name)
		}
		got := make([]uint32, rank)
		if err := binary.Read(f.r, binary.LittleEndian, got); err != nil {
			return fmt.Errorf("data.Stream.Cache: %s: a damaged header: delete it", f.name)
		}
		if !slices.EqualFunc(got, want, func(a uint32, b int) bool { return int(a) == b }) {
			what := [2]string{"samples", "labels"}[k]
			return fmt.Errorf("data.Stream.Cache: %s holds %s of shape %v but the stream's are of shape %v: delete it, or give another file name", f.name, what, got, want)
		}
	}
	return nil
}

func (f *fileIter) Next() (Batch, error) {
	if f.done {
		return Batch{}, io.EOF
	}
	var n uint32
	err := binary.Read(f.r, binary.LittleEndian, &n)
	if err == nil && n == 0 {
		f.done = true
		return Batch{}, io.EOF
	}
	b := Batch{N: int(n)}
	if err == nil && n > 1<<24 {
		err = fmt.Errorf("an element of %d samples", n)
	}
	if err == nil {
		b.X, b.Y = make([]float32, b.N*f.xs), make([]float32, b.N*f.ys)
		if err = binary.Read(f.r, binary.LittleEndian, b.X); err == nil {
			err = binary.Read(f.r, binary.LittleEndian, b.Y)
		}
	}
	if err != nil {
		f.done = true
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Batch{}, fmt.Errorf("data.Stream.Cache: reading %s: %w: delete it to write it again", f.name, err)
	}
	return b, nil
}

func (f *fileIter) Close() error {
	f.done = true
	return f.f.Close()
}
