package device_test

import (
	"context"
	"fmt"
	"github.com/gokeras/gokeras/device/driver"
	"os"

	"github.com/gokeras/gokeras/device"
	_ "github.com/gokeras/gokeras/device/cpu" // the CPU backend, for NewMachine
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func ExampleParseSpec() {
	for _, s := range []string{"/GPU:0", "gpu", "/cpu:0", "/job:localhost/device:GPU:1"} {
		spec, err := device.ParseSpec(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-28q %-7s %s\n", s, spec.Short(), spec)
	}
	_, err := device.ParseSpec("/TPU:0")
	fmt.Println(err != nil)
	// Output:
	// "/GPU:0"                     /GPU:0  /job:localhost/replica:0/task:0/device:GPU:0
	// "gpu"                        /GPU:0  /job:localhost/replica:0/task:0/device:GPU:0
	// "/cpu:0"                     /CPU:0  /job:localhost/replica:0/task:0/device:CPU:0
	// "/job:localhost/device:GPU:1" /GPU:1  /job:localhost/replica:0/task:0/device:GPU:1
	// true
}

func ExampleWith() {
	show := func(where string, ctx context.Context) {
		if spec, ok := device.FromContext(ctx); ok {
			fmt.Println(where, spec.Short())
		} else {
			fmt.Println(where, "no scope")
		}
	}
	ctx := context.Background()
	show("outside:", ctx)
	err := device.With(ctx, "/CPU:0", func(ctx context.Context) error {
		show("outer:", ctx)
		err := device.With(ctx, "/GPU:1", func(ctx context.Context) error {
			show("inner:", ctx)
			done := make(chan struct{})
			go func() { // the scope goes with the context to another goroutine
				show("goroutine given ctx:", ctx)
				close(done)
			}()
			<-done
			return nil
		})
		show("outer again:", ctx)
		return err
	})
	show("outside again:", ctx)
	fmt.Println("error:", err)
	// Output:
	// outside: no scope
	// outer: /CPU:0
	// inner: /GPU:1
	// goroutine given ctx: /GPU:1
	// outer again: /CPU:0
	// outside again: no scope
	// error: <nil>
}

func ExampleCopy() {
	host := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{1, 2, 3, 4, 5, 6}))
	placed, stats, err := device.Place(host, "/CPU:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(placed, stats.Bytes, "bytes", stats.From.Short(), "->", stats.To.Short())

	dup, stats, err := device.Copy(placed, "/device:CPU:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(dup.Device(), dup.Shape(), stats.Bytes, "bytes")

	// The copy is independent of its source.
	d, _ := dup.Dense()
	d.Data().([]float32)[0] = 100
	src, _ := placed.Dense()
	fmt.Println(src.Data().([]float32)[0], d.Data().([]float32)[0])
	// Output:
	// Tensor(float32 [2 3] on /CPU:0) 24 bytes /CPU:0 -> /CPU:0
	// /job:localhost/replica:0/task:0/device:CPU:0 [2 3] 24 bytes
	// 1 100
}

func ExampleResolve() {
	// This example's binary has no GPU driver, so /GPU:0 does not exist.
	gpu, _ := device.ParseSpec("/GPU:0")
	_, err := device.Resolve(context.Background(), &gpu, device.PlaceOptions{})
	fmt.Println(err != nil)

	// With soft placement it falls back to the CPU, with a warning.
	spec, err := device.Resolve(context.Background(), &gpu, device.PlaceOptions{Soft: true, Warn: os.Stdout})
	fmt.Println(spec.Short(), err)
	// Output:
	// true
	// gokeras: warning: soft placement: /GPU:0 does not exist (this binary was built without CUDA support); placing on /CPU:0 instead
	// /CPU:0 <nil>
}

func ExampleNewMachine() {
	g := gorgonia.NewGraph()
	x := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(2), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 2}))))
	w := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(2), gorgonia.WithName("w"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{3, 4}))))
	y := gorgonia.Must(gorgonia.HadamardProd(x, w))

	spec, err := device.Resolve(context.Background(), nil, device.PlaceOptions{}) // no scope, no GPU: /CPU:0
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := device.NewMachine(spec, g, driver.MachineOptions{
		Learnables:   []*gorgonia.Node{w},
		PlacementLog: os.Stdout,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	if err := m.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(y.Value())
	// Output:
	// x: (Placeholder): /job:localhost/replica:0/task:0/device:CPU:0
	// w: (VariableV2): /job:localhost/replica:0/task:0/device:CPU:0
	// Executing op ⊙ false(x, w) in device /job:localhost/replica:0/task:0/device:CPU:0
	// [3  8]
}
