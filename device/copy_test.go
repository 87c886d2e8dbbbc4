package device

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"gorgonia.org/tensor"
)

func denseOf(shape []int, data []float32) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
}

func floats(t *testing.T, tn *Tensor) []float32 {
	t.Helper()
	d, err := tn.Dense()
	if err != nil {
		t.Fatalf("Dense: %v", err)
	}
	switch v := d.Data().(type) {
	case []float32:
		return v
	case float32:
		return []float32{v}
	}
	t.Fatalf("Dense holds %T", d.Data())
	return nil
}

func TestPlaceOnCPU(t *testing.T) {
	tests := []struct {
		name  string
		dense func() *tensor.Dense
		shape []int
		want  []float32
	}{
		{"matrix", func() *tensor.Dense { return denseOf([]int{2, 3}, []float32{1, 2, 3, 4, 5, 6}) }, []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}},
		{"vector", func() *tensor.Dense { return denseOf([]int{4}, []float32{1, 2, 3, 4}) }, []int{4}, []float32{1, 2, 3, 4}},
		{"scalar", func() *tensor.Dense { return tensor.New(tensor.FromScalar(float32(7))) }, []int{}, []float32{7}},
		{"3-d", func() *tensor.Dense { return denseOf([]int{2, 1, 2}, []float32{1, 2, 3, 4}) }, []int{2, 1, 2}, []float32{1, 2, 3, 4}},
		{"transposed", func() *tensor.Dense {
			d := denseOf([]int{2, 3}, []float32{1, 2, 3, 4, 5, 6})
			if err := d.T(); err != nil {
				panic(err)
			}
			return d
		}, []int{3, 2}, []float32{1, 4, 2, 5, 3, 6}},
		{"column slice", func() *tensor.Dense {
			d := denseOf([]int{3, 2}, []float32{1, 2, 3, 4, 5, 6})
			col, err := d.Slice(nil, tensor.S(1))
			if err != nil {
				panic(err)
			}
			return col.(*tensor.Dense)
		}, []int{3}, []float32{2, 4, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.dense()
			placed, stats, err := Place(src, "/cpu:0")
			if err != nil {
				t.Fatalf("Place: %v", err)
			}
			if placed.Device() != NewSpec(CPU, 0) {
				t.Errorf("Device() = %v, want /CPU:0", placed.Device())
			}
			if got := placed.Shape(); !reflect.DeepEqual(got, tt.shape) && !(len(got) == 0 && len(tt.shape) == 0) {
				t.Errorf("Shape() = %v, want %v", got, tt.shape)
			}
			if want := int64(len(tt.want) * 4); placed.Bytes() != want || stats.Bytes != want {
				t.Errorf("Bytes() = %d, stats.Bytes = %d, want %d", placed.Bytes(), stats.Bytes, want)
			}
			if stats.From != NewSpec(CPU, 0) || stats.To != NewSpec(CPU, 0) {
				t.Errorf("stats %v -> %v, want /CPU:0 -> /CPU:0", stats.From.Short(), stats.To.Short())
			}
			if got := floats(t, placed); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("data = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlaceCopiesEvenOnCPU(t *testing.T) {
	data := []float32{1, 2, 3, 4}
	placed, _, err := Place(denseOf([]int{2, 2}, data), "/CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	data[0] = 100
	if got := floats(t, placed)[0]; got != 1 {
		t.Errorf("the placed tensor changed with its source: [0] = %v", got)
	}
}

func TestCopyOnCPU(t *testing.T) {
	src, _, err := Place(denseOf([]int{2, 3}, []float32{1, 2, 3, 4, 5, 6}), "/CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	dup, stats, err := Copy(src, "/job:localhost/replica:0/task:0/device:CPU:0")
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	if dup.Bytes() != 24 || stats.Bytes != 24 {
		t.Errorf("Bytes() = %d, stats.Bytes = %d, want 24", dup.Bytes(), stats.Bytes)
	}
	if !reflect.DeepEqual(dup.Shape(), []int{2, 3}) {
		t.Errorf("shape %v, want [2 3]", dup.Shape())
	}
	if got, want := floats(t, dup), floats(t, src); !reflect.DeepEqual(got, want) {
		t.Errorf("copy holds %v, source %v", got, want)
	}
	// Independent: writing the copy leaves the source alone, both ways.
	floats(t, dup)[0] = -1
	if got := floats(t, src)[0]; got != 1 {
		t.Errorf("mutating the copy changed the source: [0] = %v", got)
	}
	floats(t, src)[5] = -6
	if got := floats(t, dup)[5]; got != 6 {
		t.Errorf("mutating the source changed the copy: [5] = %v", got)
	}
	// Shape() returns a copy too.
	dup.Shape()[0] = 99
	if dup.Shape()[0] != 2 {
		t.Error("Shape() exposes the tensor's own slice")
	}
	// Dense shares memory with the tensor (documented): no hidden copy.
	d1, _ := dup.Dense()
	d1.Data().([]float32)[1] = 42
	if got := floats(t, dup)[1]; got != 42 {
		t.Errorf("Dense() did not share the tensor's memory: [1] = %v", got)
	}
}

func TestPlaceAndCopyErrors(t *testing.T) {
	good := func() *tensor.Dense { return denseOf([]int{2}, []float32{1, 2}) }
	onCPU, _, err := Place(good(), "/CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	freed, _, _ := Place(good(), "/CPU:0")
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		run    func() error
		errIs  error
		errHas string
	}{
		{"float64", func() error {
			_, _, err := Place(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2})), "/CPU:0")
			return err
		}, nil, "dtype float64"},
		{"int", func() error {
			_, _, err := Place(tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{1, 2})), "/CPU:0")
			return err
		}, nil, "dtype int"},
		{"nil dense", func() error { _, _, err := Place(nil, "/CPU:0"); return err }, nil, "nil *tensor.Dense"},
		{"zero dense", func() error { _, _, err := Place(&tensor.Dense{}, "/CPU:0"); return err }, nil, "reading the tensor"},
		{"bad spec", func() error { _, _, err := Place(good(), "/TPU:0"); return err }, ErrInvalidSpec, `"/TPU:0"`},
		{"absent GPU", func() error { _, _, err := Place(good(), "/GPU:0"); return err }, ErrNoSuchDevice, "-tags cuda"},
		{"second CPU", func() error { _, _, err := Copy(onCPU, "/CPU:1"); return err }, ErrNoSuchDevice, "/CPU:1"},
		{"copy to absent GPU", func() error { _, _, err := Copy(onCPU, "/device:GPU:0"); return err }, ErrNoSuchDevice, "without CUDA support"},
		{"copy nil", func() error { _, _, err := Copy(nil, "/CPU:0"); return err }, nil, "nil *Tensor"},
		{"copy freed", func() error { _, _, err := Copy(freed, "/CPU:0"); return err }, nil, "was freed"},
		{"dense of freed", func() error { _, err := freed.Dense(); return err }, nil, "was freed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil {
				t.Fatal("no error")
			}
			if tt.errIs != nil && !errors.Is(err, tt.errIs) {
				t.Errorf("error %v does not wrap %v", err, tt.errIs)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("error %q does not mention %q", err, tt.errHas)
			}
		})
	}
	if err := freed.Free(); err != nil {
		t.Errorf("second Free = %v, want nil", err)
	}
}

func TestCopyThroughFakeGPU(t *testing.T) {
	fake := withFakeGPU(t, 2)
	want := []float32{1, 2, 3, 4, 5, 6}
	src := denseOf([]int{3, 2}, append([]float32(nil), want...))

	onGPU, toGPU, err := Place(src, "/GPU:1")
	if err != nil {
		t.Fatalf("Place on /GPU:1: %v", err)
	}
	if onGPU.Device() != NewSpec(GPU, 1) || toGPU.From != NewSpec(CPU, 0) || toGPU.To != NewSpec(GPU, 1) || toGPU.Bytes != 24 {
		t.Errorf("Place: tensor on %v, stats %+v", onGPU.Device().Short(), toGPU)
	}
	if _, err := onGPU.Dense(); err == nil || !strings.Contains(err.Error(), "copy it to /CPU:0 first") {
		t.Errorf("Dense() of a GPU tensor = %v, want an error telling to copy to /CPU:0", err)
	}
	if fake.liveBuffers() != 1 {
		t.Errorf("%d live device buffers, want 1", fake.liveBuffers())
	}

	// Device to device, directly (driver.PeerCopier) and staged through the host.
	peer, _, err := Copy(onGPU, "/GPU:0")
	if err != nil || fake.peerCopies != 1 {
		t.Fatalf("Copy /GPU:1 -> /GPU:0 = %v, peer copies %d", err, fake.peerCopies)
	}
	fake.noPeer = true
	staged, _, err := Copy(peer, "/GPU:1")
	if err != nil || fake.peerCopies != 1 {
		t.Fatalf("staged Copy /GPU:0 -> /GPU:1 = %v, peer copies %d", err, fake.peerCopies)
	}

	back, fromGPU, err := Copy(staged, "/CPU:0")
	if err != nil {
		t.Fatalf("Copy to /CPU:0: %v", err)
	}
	if fromGPU.From != NewSpec(GPU, 1) || fromGPU.To != NewSpec(CPU, 0) || fromGPU.Bytes != 24 {
		t.Errorf("stats back to the host: %+v", fromGPU)
	}
	if got := floats(t, back); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip through the fake GPUs gave %v, want %v", got, want)
	}
	if !reflect.DeepEqual(back.Shape(), []int{3, 2}) {
		t.Errorf("round trip shape %v, want [3 2]", back.Shape())
	}
	// The device copies are independent of the source and of each other.
	src.Data().([]float32)[0] = 100
	floats(t, back)[1] = 200
	again, _, err := Copy(onGPU, "/CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	if got := floats(t, again); !reflect.DeepEqual(got, want) {
		t.Errorf("the GPU tensor changed after writes to its source and its copy: %v", got)
	}

	for _, tn := range []*Tensor{onGPU, peer, staged, back, again} {
		if err := tn.Free(); err != nil {
			t.Errorf("Free %v: %v", tn, err)
		}
	}
	if fake.liveBuffers() != 0 {
		t.Errorf("%d device buffers leaked", fake.liveBuffers())
	}
	if _, _, err := Copy(onGPU, "/CPU:0"); err == nil {
		t.Error("copying a freed GPU tensor succeeded")
	}

	// Index out of range and allocation failures are errors that free nothing twice.
	if _, _, err := Place(src, "/GPU:2"); !errors.Is(err, ErrNoSuchDevice) || !strings.Contains(err.Error(), "2 GPUs") {
		t.Errorf("Place on /GPU:2 with two GPUs = %v", err)
	}
	fake.failAlloc = errors.New("out of memory")
	if _, _, err := Place(src, "/GPU:0"); err == nil || !strings.Contains(err.Error(), "out of memory") || !strings.Contains(err.Error(), "24 B on /GPU:0") {
		t.Errorf("Place with a failing allocator = %v", err)
	}
}

func TestCopyStats(t *testing.T) {
	tests := []struct {
		stats CopyStats
		text  string
		rate  float64
	}{
		{CopyStats{From: NewSpec(CPU, 0), To: NewSpec(GPU, 0), Bytes: 4_000_000, Duration: 1200 * time.Microsecond},
			"copied 4.0 MB /CPU:0 -> /GPU:0 in 1.2ms (3.3 GB/s)", 4e6 / 1.2e-3},
		{CopyStats{From: NewSpec(GPU, 1), To: NewSpec(CPU, 0), Bytes: 24, Duration: 250 * time.Nanosecond},
			"copied 24 B /GPU:1 -> /CPU:0 in 250ns (96.0 MB/s)", 24 / 250e-9},
		{CopyStats{From: NewSpec(CPU, 0), To: NewSpec(CPU, 0), Bytes: 1500, Duration: 3 * time.Microsecond},
			"copied 1.5 kB /CPU:0 -> /CPU:0 in 3.0µs (500.0 MB/s)", 5e8},
		{CopyStats{From: NewSpec(CPU, 0), To: NewSpec(GPU, 0), Bytes: 8_000_000_000, Duration: 2 * time.Second},
			"copied 8.0 GB /CPU:0 -> /GPU:0 in 2.00s (4.0 GB/s)", 4e9},
		{CopyStats{From: NewSpec(CPU, 0), To: NewSpec(CPU, 0), Bytes: 3e15, Duration: time.Second},
			"copied 3000.0 TB /CPU:0 -> /CPU:0 in 1.00s (3000.0 TB/s)", 3e15},
		{CopyStats{From: NewSpec(CPU, 0), To: NewSpec(CPU, 0), Bytes: 8},
			"copied 8 B /CPU:0 -> /CPU:0 in 0ns", 0},
	}
	for _, tt := range tests {
		if got := tt.stats.String(); got != tt.text {
			t.Errorf("String() = %q, want %q", got, tt.text)
		}
		if got := tt.stats.BytesPerSecond(); fmt.Sprintf("%.6g", got) != fmt.Sprintf("%.6g", tt.rate) {
			t.Errorf("BytesPerSecond() of %q = %v, want %v", tt.text, got, tt.rate)
		}
	}
}

func TestTensorString(t *testing.T) {
	tn, _, err := Place(denseOf([]int{2, 3}, make([]float32, 6)), "/CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	if got := tn.String(); got != "Tensor(float32 [2 3] on /CPU:0)" {
		t.Errorf("String() = %q", got)
	}
	_ = tn.Free()
	if got := tn.String(); got != "Tensor(float32 [2 3] on /CPU:0, freed)" {
		t.Errorf("String() after Free = %q", got)
	}
	var none *Tensor
	if got := none.String(); got != "Tensor(nil)" {
		t.Errorf("nil String() = %q", got)
	}
}
