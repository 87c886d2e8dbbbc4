//go:build cudavm && cgo && kernelemu

package cuda

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/gokeras/gokeras/device"
	"gorgonia.org/tensor"
)

// These tests check the emulated GPU itself (api_emu.go): that its
// sgemm follows cuBLAS's column-major conventions, so that the backend's
// mapping of row-major products (rowMajorGemm) is really checked by the
// machine tests that run on it, and that it catches what a GPU would
// silently corrupt.

// colMajorRef is cublasSgemm's definition, element by element.
func colMajorRef(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	at := func(i, p int) float32 { // op(A)[i][p]
		if transA {
			return a[i*lda+p]
		}
		return a[p*lda+i]
	}
	bt := func(p, j int) float32 { // op(B)[p][j]
		if transB {
			return b[p*ldb+j]
		}
		return b[j*ldb+p]
	}
	for j := range n {
		for i := range m {
			var sum float64
			for p := range k {
				sum += float64(at(i, p)) * float64(bt(p, j))
			}
			c[j*ldc+i] = float32(float64(alpha)*sum + float64(beta)*float64(c[j*ldc+i]))
		}
	}
}

func TestEmulatedSgemmIsColumnMajor(t *testing.T) {
	h := newHarness(t)
	bl := h.blas()
	rng := rand.New(rand.NewPCG(3, 3))
	const m, n, k = 5, 7, 9
	for _, tc := range []struct{ transA, transB bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		// Leading dimensions beyond the stored rows, as cuBLAS allows.
		lda, aCols := m+2, k
		if tc.transA {
			lda, aCols = k+1, m
		}
		ldb, bCols := k+3, n
		if tc.transB {
			ldb, bCols = n+1, k
		}
		ldc := m + 4
		a, b := randn(rng, lda*aCols, 1), randn(rng, ldb*bCols, 1)
		c := randn(rng, ldc*n, 1)
		want := append([]float32(nil), c...)
		colMajorRef(tc.transA, tc.transB, m, n, k, 0.5, a, lda, b, ldb, 2, want, ldc)
		dc := h.upload(c)
		h.do(func() error {
			return bl.sgemm(tc.transA, tc.transB, m, n, k, 0.5, h.upload(a), lda, h.upload(b), ldb, 2, dc, ldc)
		})
		sameValues(t, "column-major sgemm", h.download(dc, len(c)), want, 1e-5)
	}
	// cuBLAS's refusals of leading dimensions shorter than the stored rows.
	for _, tc := range []struct {
		transA        bool
		lda, ldb, ldc int
	}{{false, m - 1, k, m}, {true, k - 1, k, m}, {false, m, k - 1, m}, {false, m, k, m - 1}} {
		err := bl.sgemm(tc.transA, false, m, n, k, 1, 0, tc.lda, 0, tc.ldb, 0, 0, tc.ldc)
		if err == nil || !strings.Contains(err.Error(), "CUBLAS_STATUS_INVALID_VALUE") {
			t.Errorf("sgemm with transA %t lda %d ldb %d ldc %d: %v, want CUBLAS_STATUS_INVALID_VALUE", tc.transA, tc.lda, tc.ldb, tc.ldc, err)
		}
	}
}

// A kernel that writes past its buffer is an error when the stream is
// waited for, naming the allocation; a copy past it is refused.
func TestEmulatorCatchesOverruns(t *testing.T) {
	h := newHarness(t)
	a, b := h.upload(make([]float32, 64)), h.upload(make([]float32, 64))
	var out devicePtr
	h.do(func() error {
		var err error
		out, err = h.g.alloc(64 * 4)
		return err
	})
	err := h.g.do(func() error {
		if err := h.k.add(h.s, a, b, out, 65); err != nil { // one float too many
			return err
		}
		return h.s.synchronize()
	})
	if err == nil || !strings.Contains(err.Error(), "past the end of the 256-byte allocation") {
		t.Errorf("a kernel writing 65 floats into 64: %v, want an error naming the overrun", err)
	}
	// Mend the guard, so that the buffer can be freed.
	c := h.g.ctx.(*emuContext)
	al := c.allocs[out]
	g := unsafe.Slice((*byte)(unsafe.Add(al.base, al.bytes)), emuGuard)
	for i := range g {
		g[i] = emuGuardByte
	}
	h.do(func() error { return h.g.free(out) })

	buf := make([]float32, 65)
	err = h.g.do(func() error { return h.g.ctx.copyHtoD(a, unsafe.Pointer(&buf[0]), 65*4) })
	if err == nil || !strings.Contains(err.Error(), "runs 4 bytes past the end of its 256-byte allocation") {
		t.Errorf("copying 65 floats into 64: %v, want an error naming the overrun", err)
	}
}

// A launch with a count of arguments that is not the kernel's fails when
// it runs, as do a block too large and too much shared memory when they
// are queued.
func TestEmulatorChecksLaunches(t *testing.T) {
	h := newHarness(t)
	a := h.upload(make([]float32, 4))
	err := h.g.do(func() error {
		if err := h.k.launch(h.s, kAdd, 1, 32, 0, ptrArg(a), ptrArg(a), ptrArg(a)); err != nil {
			return err
		}
		return h.s.synchronize()
	})
	if err == nil || !strings.Contains(err.Error(), "3 arguments are not its count") {
		t.Errorf("gk_add with 3 arguments: %v", err)
	}
	for _, tc := range []struct{ block, shared int }{{2048, 0}, {32, 64 << 10}} {
		err := h.g.do(func() error {
			return h.k.launch(h.s, kAdd, 1, tc.block, tc.shared, ptrArg(a), ptrArg(a), ptrArg(a), intArg(4))
		})
		if err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_INVALID_VALUE") {
			t.Errorf("a block of %d threads with %d bytes of shared memory: %v", tc.block, tc.shared, err)
		}
	}
}

// A kernel gets exactly the dynamic shared memory its launch asks for: one
// that writes past it fails, and one that reads past it reads NaNs.
func TestEmulatedSharedMemoryIsTheLaunchsSize(t *testing.T) {
	h := newHarness(t)
	const rows, cols = 2, 64
	x := h.upload(make([]float32, rows*cols))
	y := h.upload(make([]float32, rows*cols))
	// gk_softmax_rows keeps a value per thread of its block in s[].
	for _, tc := range []struct {
		shared int
		ok     bool
	}{{64 * 4, true}, {32 * 4, false}} {
		err := h.g.do(func() error {
			if err := h.k.launch(h.s, kSoftmaxRows, rows, 64, tc.shared, ptrArg(x), ptrArg(y), intArg(rows), intArg(cols)); err != nil {
				return err
			}
			return h.s.synchronize()
		})
		if tc.ok && err != nil {
			t.Errorf("gk_softmax_rows with %d bytes of shared memory for 64 threads: %v", tc.shared, err)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "wrote past the 128 bytes of dynamic shared memory")) {
			t.Errorf("gk_softmax_rows with %d bytes of shared memory for 64 threads: %v, want it to have written past them", tc.shared, err)
		}
	}
}

// Device memory starts as NaNs, so that a kernel that reads what nothing
// wrote shows.
func TestEmulatedMemoryStartsAsNaN(t *testing.T) {
	h := newHarness(t)
	var p devicePtr
	h.do(func() error {
		var err error
		p, err = h.g.alloc(16)
		return err
	})
	defer h.do(func() error { return h.g.free(p) })
	for i, v := range h.download(p, 4) {
		if !math.IsNaN(float64(v)) {
			t.Errorf("fresh device memory [%d] = %v, want NaN", i, v)
		}
	}
}

// Streams wait for each other's events as on a GPU: work queued after a
// wait runs after the work before the event's latest record, on whichever
// stream; a wait for a record that never comes is a deadlock, reported.
func TestEmulatedStreamsWaitForEvents(t *testing.T) {
	h := newHarness(t)
	var other gpuStream
	var ev gpuEvent
	h.do(func() error {
		var err error
		if other, err = h.g.ctx.newStream(); err != nil {
			return err
		}
		ev, err = h.g.ctx.newEvent()
		return err
	})
	defer h.do(func() error { return errors.Join(other.destroy(), ev.destroy()) })
	a, b, out := h.upload([]float32{1, 2}), h.upload([]float32{10, 20}), h.upload(make([]float32, 2))
	// other (created later, so run later when nothing waits): out = a + b,
	// then the event; h.s waits for it and doubles out in place.
	h.do(func() error {
		if err := h.s.wait(ev); err != nil { // no record queued yet: nothing to wait for
			return err
		}
		if err := h.k.add(other, a, b, out, 2); err != nil {
			return err
		}
		if err := other.record(ev); err != nil {
			return err
		}
		if err := h.s.wait(ev); err != nil {
			return err
		}
		return h.k.add(h.s, out, out, out, 2)
	})
	if got := h.download(out, 2); got[0] != 22 || got[1] != 44 {
		t.Errorf("out = %v, want [22 44]: the wait did not order the streams", got)
	}
	never, err := func() (gpuEvent, error) { return h.g.ctx.newEvent() }()
	if err != nil {
		t.Fatal(err)
	}
	err = h.g.do(func() error {
		if err := other.record(never); err != nil {
			return err
		}
		if err := h.s.wait(never); err != nil { // waits for the record above: fine
			return err
		}
		if err := other.wait(ev); err != nil {
			return err
		}
		c := never.(*emuEvent)
		c.queued++ // a wait for a record that is never queued
		return errors.Join(h.s.wait(never), h.s.synchronize())
	})
	if err == nil || !strings.Contains(err.Error(), "deadlock") {
		t.Errorf("a wait for a record that never comes: %v, want a deadlock error", err)
	}
}

// With two emulated GPUs a tensor goes from /GPU:0 to /GPU:1 peer to peer
// (buffer.CopyFromPeer) and comes back whole.
func TestEmulatedPeerCopy(t *testing.T) {
	t.Setenv("GOKERAS_EMU_GPUS", "2")
	data := make([]float32, 1000)
	for i := range data {
		data[i] = float32(i) - 0.25
	}
	src := tensor.New(tensor.WithShape(10, 100), tensor.WithBacking(data))
	on0, _, err := device.Place(src, "/GPU:0")
	if err != nil {
		t.Fatal(err)
	}
	defer on0.Free()
	on1, stats, err := device.Copy(on0, "/GPU:1")
	if err != nil {
		t.Fatal(err)
	}
	defer on1.Free()
	if stats.From.Index != 0 || stats.To.Index != 1 {
		t.Errorf("copy stats %+v, want /GPU:0 -> /GPU:1", stats)
	}
	back, _, err := device.Copy(on1, "/CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	d, err := back.Dense()
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Data().([]float32); !slices.Equal(got, data) {
		t.Errorf("the tensor came back from /GPU:1 changed: %v...", got[:4])
	}
}
