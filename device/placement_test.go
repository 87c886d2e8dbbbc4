package device

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/gokeras/gokeras/device/driver"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestListPhysicalDevices(t *testing.T) {
	cpus, err := ListPhysicalDevices(CPU)
	if err != nil || len(cpus) != 1 || cpus[0].Kind != CPU || cpus[0].Name != "/physical_device:CPU:0" {
		t.Fatalf("ListPhysicalDevices(CPU) = %+v, %v; want the one CPU", cpus, err)
	}
	gpus, err := ListPhysicalDevices(GPU)
	if err != nil || len(gpus) != 0 {
		t.Errorf("ListPhysicalDevices(GPU) without a GPU driver = %+v, %v; want none and no error", gpus, err)
	}
	all, err := ListPhysicalDevices("")
	if err != nil || len(all) != 1 {
		t.Errorf("ListPhysicalDevices(\"\") = %+v, %v; want the CPU only", all, err)
	}
	if _, err := ListPhysicalDevices("TPU"); err == nil || !strings.Contains(err.Error(), "CPU and GPU") {
		t.Errorf("ListPhysicalDevices(TPU) error = %v, want one naming the known types", err)
	}

	fake := withFakeGPU(t, 2)
	gpus, err = ListPhysicalDevices("gpu") // any case
	if err != nil || len(gpus) != 2 || gpus[1].Index != 1 {
		t.Errorf("ListPhysicalDevices(gpu) with two fake GPUs = %+v, %v", gpus, err)
	}
	all, err = ListPhysicalDevices("")
	if err != nil || len(all) != 3 || all[0].Kind != CPU || all[1].Kind != GPU {
		t.Errorf("ListPhysicalDevices(\"\") = %+v, %v; want the CPU then two GPUs", all, err)
	}
	fake.devicesErr = errors.New("cuInit failed")
	if _, err := ListPhysicalDevices(GPU); err == nil || !strings.Contains(err.Error(), "cuInit failed") {
		t.Errorf("ListPhysicalDevices(GPU) with a failing driver = %v, want the driver's error", err)
	}
}

func TestDefaultSpec(t *testing.T) {
	if got := DefaultSpec(); got != NewSpec(CPU, 0) {
		t.Errorf("DefaultSpec() without a GPU driver = %v, want /CPU:0", got.Short())
	}
	fake := withFakeGPU(t, 0)
	if got := DefaultSpec(); got != NewSpec(CPU, 0) {
		t.Errorf("DefaultSpec() with a GPU driver that sees no GPU = %v, want /CPU:0", got.Short())
	}
	fake.n = 2
	if got := DefaultSpec(); got != NewSpec(GPU, 0) {
		t.Errorf("DefaultSpec() with two GPUs = %v, want /GPU:0", got.Short())
	}
	fake.devicesErr = errors.New("driver broken")
	if got := DefaultSpec(); got != NewSpec(CPU, 0) {
		t.Errorf("DefaultSpec() with a failing GPU driver = %v, want /CPU:0", got.Short())
	}
}

func specPtr(s Spec) *Spec { return &s }

func TestResolveWithoutGPUDriver(t *testing.T) {
	tests := []struct {
		name      string
		requested *Spec
		scope     string // "" for none
		want      Spec
		errIs     error
		errHas    []string
	}{
		{name: "nothing asked: default", want: NewSpec(CPU, 0)},
		{name: "scope", scope: "/cpu:0", want: NewSpec(CPU, 0)},
		{name: "explicit", requested: specPtr(NewSpec(CPU, 0)), scope: "/GPU:0", want: NewSpec(CPU, 0)},
		{name: "job filled in", requested: &Spec{Kind: CPU}, want: NewSpec(CPU, 0)},
		{name: "explicit GPU", requested: specPtr(NewSpec(GPU, 0)), errIs: ErrNoSuchDevice,
			errHas: []string{"/GPU:0", "built without CUDA support", "-tags cuda", "README", "/CPU:0", "--soft-placement"}},
		{name: "GPU from scope", scope: "/GPU:1", errIs: ErrNoSuchDevice, errHas: []string{"/GPU:1", "without CUDA"}},
		{name: "second CPU", requested: specPtr(NewSpec(CPU, 1)), errIs: ErrNoSuchDevice, errHas: []string{"/CPU:1", "1 CPU: /CPU:0"}},
		{name: "other replica", requested: &Spec{Job: LocalJob, Replica: 1, Kind: CPU}, errIs: ErrNoSuchDevice, errHas: []string{"replica 1"}},
		{name: "unknown kind", requested: &Spec{Kind: "TPU"}, errIs: ErrInvalidSpec, errHas: []string{`"TPU"`, "CPU and GPU"}},
		{name: "lower-case kind", requested: &Spec{Kind: "gpu"}, errIs: ErrInvalidSpec},
		{name: "remote job", requested: &Spec{Job: "worker", Kind: CPU}, errIs: ErrInvalidSpec, errHas: []string{`"worker"`}},
		{name: "negative index", requested: &Spec{Kind: CPU, Index: -1}, errIs: ErrInvalidSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.scope != "" {
				ctx = NewContext(ctx, mustSpec(t, tt.scope))
			}
			got, err := Resolve(ctx, tt.requested, PlaceOptions{})
			if tt.errIs == nil {
				if err != nil || got != tt.want {
					t.Fatalf("Resolve = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.errIs) {
				t.Fatalf("Resolve error = %v, want one wrapping %v", err, tt.errIs)
			}
			for _, w := range tt.errHas {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Resolve error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestResolveWithFakeGPUs(t *testing.T) {
	fake := withFakeGPU(t, 2)
	if got, err := Resolve(context.Background(), nil, PlaceOptions{}); err != nil || got != NewSpec(GPU, 0) {
		t.Errorf("Resolve(nil) with GPUs = %v, %v; want /GPU:0", got.Short(), err)
	}
	if got, err := Resolve(context.Background(), specPtr(NewSpec(GPU, 1)), PlaceOptions{}); err != nil || got != NewSpec(GPU, 1) {
		t.Errorf("Resolve(/GPU:1) = %v, %v", got.Short(), err)
	}
	_, err := Resolve(context.Background(), specPtr(NewSpec(GPU, 2)), PlaceOptions{})
	if !errors.Is(err, ErrNoSuchDevice) {
		t.Fatalf("Resolve(/GPU:2) with two GPUs = %v, want ErrNoSuchDevice", err)
	}
	for _, w := range []string{"/GPU:2", "out of range", "2 GPUs: /GPU:0 (Fake GPU), /GPU:1 (Fake GPU)"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "CUDA support") {
		t.Errorf("error %q blames the build although a GPU driver is registered", err)
	}

	fake.n = 0
	if _, err := Resolve(context.Background(), specPtr(NewSpec(GPU, 0)), PlaceOptions{}); !errors.Is(err, ErrNoSuchDevice) || !strings.Contains(err.Error(), "sees no GPU") {
		t.Errorf("Resolve(/GPU:0) with a driver that sees no GPU = %v", err)
	}
	cause := errors.New("CUDA_ERROR_NO_DEVICE")
	fake.devicesErr = cause
	_, err = Resolve(context.Background(), specPtr(NewSpec(GPU, 0)), PlaceOptions{})
	if !errors.Is(err, ErrNoSuchDevice) || !errors.Is(err, cause) {
		t.Errorf("Resolve with a failing driver = %v, want both ErrNoSuchDevice and the driver's error", err)
	}
}

func TestSoftPlacement(t *testing.T) {
	tests := []struct {
		name      string
		requested Spec
		gpus      int // -1: no GPU driver
		wantWarn  string
	}{
		{"no GPU driver", NewSpec(GPU, 0), -1, "gokeras: warning: soft placement: /GPU:0 does not exist (this binary was built without CUDA support); placing on /CPU:0 instead\n"},
		{"GPU index out of range", NewSpec(GPU, 3), 2, "/GPU:3 does not exist (/GPU:3 is out of range: the GPU driver sees 2 GPUs"},
		{"second CPU", NewSpec(CPU, 1), -1, "/CPU:1 does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.gpus >= 0 {
				withFakeGPU(t, tt.gpus)
			}
			var warn bytes.Buffer
			got, err := Resolve(context.Background(), &tt.requested, PlaceOptions{Soft: true, Warn: &warn})
			if err != nil || got != NewSpec(CPU, 0) {
				t.Fatalf("soft Resolve(%v) = %v, %v; want /CPU:0", tt.requested.Short(), got.Short(), err)
			}
			if !strings.Contains(warn.String(), tt.wantWarn) {
				t.Errorf("warning %q does not contain %q", warn.String(), tt.wantWarn)
			}
			if lines := strings.Count(warn.String(), "\n"); lines != 1 || !strings.HasSuffix(warn.String(), "\n") {
				t.Errorf("warning is %d lines, want exactly one: %q", lines, warn.String())
			}
		})
	}

	t.Run("existing device: no warning", func(t *testing.T) {
		var warn bytes.Buffer
		if got, err := Resolve(context.Background(), specPtr(NewSpec(CPU, 0)), PlaceOptions{Soft: true, Warn: &warn}); err != nil || got != NewSpec(CPU, 0) || warn.Len() != 0 {
			t.Errorf("soft Resolve(/CPU:0) = %v, %v, warning %q", got.Short(), err, warn.String())
		}
	})
	t.Run("malformed spec stays an error", func(t *testing.T) {
		var warn bytes.Buffer
		if _, err := Resolve(context.Background(), &Spec{Kind: "TPU"}, PlaceOptions{Soft: true, Warn: &warn}); !errors.Is(err, ErrInvalidSpec) || warn.Len() != 0 {
			t.Errorf("soft Resolve(TPU) = %v, warning %q; want ErrInvalidSpec and no warning", err, warn.String())
		}
	})
	t.Run("scope", func(t *testing.T) {
		var warn bytes.Buffer
		var got Spec
		err := With(context.Background(), "/GPU:0", func(ctx context.Context) (err error) {
			got, err = Resolve(ctx, nil, PlaceOptions{Soft: true, Warn: &warn})
			return err
		})
		if err != nil || got != NewSpec(CPU, 0) || !strings.Contains(warn.String(), "/GPU:0 does not exist") {
			t.Errorf("soft Resolve in a /GPU:0 scope = %v, %v, warning %q", got.Short(), err, warn.String())
		}
	})
}

// smallGraph builds out = x·W + b, loss = Σ(out)·2, and its gradients: a
// graph with placeholders, variables, a constant and ops.
func smallGraph(t *testing.T) (g *gorgonia.ExprGraph, x, w, b *gorgonia.Node) {
	t.Helper()
	g = gorgonia.NewGraph()
	x = gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 3), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{1, 2, 3, 4, 5, 6}))))
	w = gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(3, 2), gorgonia.WithName("dense/kernel"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float32{1, 0, 0, 1, 1, 1}))))
	b = gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(2), gorgonia.WithName("dense/bias"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{0.5, -0.5}))))
	xw, err := gorgonia.Mul(x, w)
	if err != nil {
		t.Fatal(err)
	}
	out, err := gorgonia.BroadcastAdd(xw, b, nil, []byte{0})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := gorgonia.Sum(out)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := gorgonia.Mul(sum, gorgonia.NewConstant(float32(2)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gorgonia.Grad(loss, w, b); err != nil {
		t.Fatal(err)
	}
	return g, x, w, b
}

func TestPlacementLog(t *testing.T) {
	g, _, w, b := smallGraph(t)
	var log bytes.Buffer
	m, err := NewMachine(NewSpec(CPU, 0), g, driver.MachineOptions{Learnables: []*gorgonia.Node{w, b}, PlacementLog: &log})
	if err != nil {
		t.Fatalf("NewMachine: %v", err)
	}
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatalf("RunAll: %v", err)
	}

	t.Logf("placement log:\n%s", log.String())
	const cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) != len(g.AllNodes()) {
		t.Errorf("placement log has %d lines for %d nodes:\n%s", len(lines), len(g.AllNodes()), log.String())
	}
	index := map[string]int{}
	for i, line := range lines {
		if !strings.HasSuffix(line, cpu) {
			t.Errorf("line %q does not end with the device %s", line, cpu)
		}
		index[line] = i
	}
	for _, want := range []string{
		"x: (Placeholder): " + cpu,
		"dense/kernel: (VariableV2): " + cpu,
		"dense/bias: (VariableV2): " + cpu,
		"2: (Const): " + cpu,
		"Executing op A × B(x, dense/kernel) in device " + cpu,
	} {
		if _, ok := index[want]; !ok {
			t.Errorf("placement log lacks %q:\n%s", want, log.String())
		}
	}
	// Inputs come before the ops that read them.
	matmul := indexOfPrefix(lines, "Executing op A × B(x, dense/kernel)")
	if matmul < 0 || index["x: (Placeholder): "+cpu] > matmul || index["dense/kernel: (VariableV2): "+cpu] > matmul {
		t.Errorf("inputs are not logged before the matmul:\n%s", log.String())
	}

	// The same graph gives the same log.
	var again bytes.Buffer
	if err := writePlacementLog(&again, g, NewSpec(CPU, 0), []*gorgonia.Node{w, b}); err != nil {
		t.Fatal(err)
	}
	if again.String() != log.String() {
		t.Errorf("placement log is not deterministic:\n%s\nthen\n%s", log.String(), again.String())
	}
}

func indexOfPrefix(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestNewMachine(t *testing.T) {
	g, _, _, _ := smallGraph(t)
	if _, err := NewMachine(NewSpec(CPU, 0), nil, driver.MachineOptions{}); err == nil {
		t.Error("NewMachine with a nil graph returned no error")
	}
	if _, err := NewMachine(NewSpec(GPU, 0), g, driver.MachineOptions{}); !errors.Is(err, ErrNoSuchDevice) || !strings.Contains(err.Error(), "-tags cuda") {
		t.Errorf("NewMachine(/GPU:0) without a GPU driver = %v, want ErrNoSuchDevice with the cuda fix", err)
	}
	if _, err := NewMachine(Spec{Kind: "TPU"}, g, driver.MachineOptions{}); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("NewMachine(TPU) = %v, want ErrInvalidSpec", err)
	}
	if _, err := NewMachine(NewSpec(CPU, 0), g, driver.MachineOptions{PlacementLog: failingWriter{}}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("NewMachine with a failing placement log = %v, want the write error", err)
	}

	fake := withFakeGPU(t, 2)
	var log bytes.Buffer
	m, err := NewMachine(Spec{Kind: GPU, Index: 1}, g, driver.MachineOptions{PlacementLog: &log})
	if err != nil {
		t.Fatalf("NewMachine(/GPU:1) with two fake GPUs: %v", err)
	}
	defer m.Close()
	if fmt.Sprint(fake.bound) != "[1]" {
		t.Errorf("the fake driver bound graphs to %v, want [1]", fake.bound)
	}
	if !strings.Contains(log.String(), "in device /job:localhost/replica:0/task:0/device:GPU:1\n") {
		t.Errorf("placement log does not name /GPU:1:\n%s", log.String())
	}
	if _, err := NewMachine(NewSpec(GPU, 5), g, driver.MachineOptions{}); !errors.Is(err, ErrNoSuchDevice) {
		t.Errorf("NewMachine(/GPU:5) with two GPUs = %v, want ErrNoSuchDevice", err)
	}
}
