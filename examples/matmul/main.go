// Command matmul is the classic "CPU vs GPU" matrix-product experiment: it times the
// float32 matrix product C = A·B of square matrices of growing size on
// every device this binary can use, prints a table and charts both curves.
//
//	go run ./examples/matmul                      # sizes 100 to 2000, quick
//	go run ./examples/matmul -max 8000 -reps 5    # the full sweep, to n = 8000
//	go run ./examples/matmul -png sweep.png
//
// Each product runs as a one-op graph (ops.Affine without bias) on a
// machine bound to the device, the way TensorFlow runs tf.matmul under
// tf.device. For each size the program reports:
//
//   - first call: making the machine and running the product once, which
//     pays for the set-up (on a GPU: the context, the library handles, the
//     kernels) — the "initial GPU delay" such charts show;
//   - steady: the median of the next -reps runs; on a GPU it includes
//     moving A and B in and C out, since the graph's values live on the host;
//   - transfers: the time device.Place takes to copy A and B to the device
//     and device.Copy takes to copy an n×n result back, measured apart, so
//     the part of the steady time that is data movement can be seen.
//
// A default build has no GPU driver, so it times the CPU only and says so.
// The CPU product goes through package blas: a native BLAS when one is
// installed, gonum's pure-Go one otherwise (the first line says which).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/gokeras/gokeras/blas"
	"github.com/gokeras/gokeras/chart"
	"github.com/gokeras/gokeras/device"
	_ "github.com/gokeras/gokeras/device/cpu" // /CPU:0 machines
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "matmul:", err)
		os.Exit(1)
	}
}

// result is one device's timing of one size.
type result struct {
	device   string
	n        int
	first    time.Duration // machine made + first product
	steady   time.Duration // median of the later products
	toDevice time.Duration // A and B placed on the device
	toHost   time.Duration // an n×n result copied back
}

// gflops is the product's arithmetic rate: 2n³ floating-point operations.
func (r result) gflops() float64 {
	return 2 * math.Pow(float64(r.n), 3) / r.steady.Seconds() / 1e9
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matmul", flag.ContinueOnError)
	fs.SetOutput(stderr)
	maxN := fs.Int("max", 2000, "largest matrix size n (the full sweep goes to 8000)")
	reps := fs.Int("reps", 3, "timed products per size after the first call; the table shows their median")
	pngPath := fs.String("png", "matmul.png", "chart of time and GFLOP/s against n, one curve per device (empty: no chart)")
	only := fs.String("device", "", `time only this device ("/CPU:0", "/GPU:0"); default: every device`)
	seed := fs.Uint64("seed", 1, "seed of the random matrices")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: matmul takes flags only (see -h)", fs.Args())
	}
	if *maxN < 1 {
		return fmt.Errorf("-max must be at least 1, got %d", *maxN)
	}
	if *reps < 1 {
		return fmt.Errorf("-reps must be at least 1, got %d", *reps)
	}
	devs, err := devices(*only, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "BLAS on the CPU: %s\n", blas.Default())
	fmt.Fprintf(stdout, "C = A·B, float32, n×n; steady = median of %d products after the first call\n\n", *reps)

	rng := rand.New(rand.NewPCG(*seed, 0x6d61746d756c)) // stream "matmul"
	const row = "%-8s %6s %11s %9s %9s %8s %10s %9s\n"
	fmt.Fprintf(stdout, row, "device", "n", "first call", "set-up", "steady", "GFLOP/s", "to device", "to host")
	var results []result
	for _, n := range sizes(*maxN) {
		a, b := randomMatrix(rng, n), randomMatrix(rng, n)
		for _, d := range devs {
			r, err := measure(d, a, b, n, *reps)
			if err != nil {
				return fmt.Errorf("n=%d on %s: %w", n, d, err)
			}
			results = append(results, r)
			fmt.Fprintf(stdout, row, r.device, fmt.Sprint(r.n), short(r.first), short(max(r.first-r.steady, 0)),
				short(r.steady), fmt.Sprintf("%.1f", r.gflops()), short(r.toDevice), short(r.toHost))
		}
	}
	if *pngPath != "" {
		if err := writeChart(*pngPath, results, devs); err != nil {
			return fmt.Errorf("-png: %w", err)
		}
		fmt.Fprintf(stdout, "\nChart written to %s\n", *pngPath)
	}
	return nil
}

// devices lists the devices to time, saying plainly when there is no GPU.
func devices(only string, stdout io.Writer) ([]string, error) {
	if only != "" {
		spec, err := device.ParseSpec(only)
		if err != nil {
			return nil, fmt.Errorf("-device: %w", err)
		}
		if _, err := device.Resolve(context.Background(), &spec, device.PlaceOptions{}); err != nil {
			return nil, fmt.Errorf("-device: %w", err)
		}
		return []string{spec.Short()}, nil
	}
	phys, err := device.ListPhysicalDevices("")
	if err != nil {
		return nil, err
	}
	var names []string
	gpus := 0
	for _, p := range phys {
		names = append(names, fmt.Sprintf("/%s:%d", p.Kind, p.Index))
		desc := p.Description
		if p.Kind == device.GPU {
			gpus++
			desc += fmt.Sprintf(", %.1f GiB", float64(p.MemoryBytes)/(1<<30))
		}
		fmt.Fprintf(stdout, "Device /%s:%d: %s\n", p.Kind, p.Index, desc)
	}
	if gpus == 0 {
		fmt.Fprintln(stdout, "No GPU: this binary has no GPU driver, or the driver sees no GPU (a default build has none; see docs/devices.md). Timing the CPU only.")
	}
	return names, nil
}

// sizes is 100, 200, 500, 1000, 2000, 5000, ... up to max, then max itself.
func sizes(maxN int) []int {
	var out []int
	for decade := 100; decade <= maxN; decade *= 10 {
		for _, m := range []int{1, 2, 5} {
			if n := decade * m; n <= maxN {
				out = append(out, n)
			}
		}
	}
	if len(out) == 0 || out[len(out)-1] != maxN {
		out = append(out, maxN)
	}
	return out
}

func randomMatrix(rng *rand.Rand, n int) *tensor.Dense {
	data := make([]float32, n*n)
	for i := range data {
		data[i] = float32(rng.Float64()*2 - 1)
	}
	return tensor.New(tensor.WithShape(n, n), tensor.WithBacking(data))
}

// measure times the product of a and b on one device.
func measure(dev string, a, b *tensor.Dense, n, reps int) (result, error) {
	r := result{device: dev, n: n}
	var err error
	if r.toDevice, r.toHost, err = transfers(dev, a, b); err != nil {
		return r, err
	}
	g := gorgonia.NewGraph()
	an := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(n, n), gorgonia.WithName("a"), gorgonia.WithValue(a))
	bn := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(n, n), gorgonia.WithName("b"), gorgonia.WithValue(b))
	cn, err := ops.Affine(an, bn, nil, false)
	if err != nil {
		return r, err
	}
	var c gorgonia.Value
	gorgonia.Read(cn, &c)
	spec, err := device.ParseSpec(dev)
	if err != nil {
		return r, err
	}

	start := time.Now()
	m, err := device.NewMachine(spec, g, driver.MachineOptions{})
	if err != nil {
		return r, err
	}
	defer m.Close()
	if err := m.RunAll(); err != nil {
		return r, err
	}
	r.first = time.Since(start)
	if err := checkProduct(a, b, c, n); err != nil {
		return r, err
	}
	m.Reset()
	times := make([]time.Duration, reps)
	for i := range times {
		start := time.Now()
		if err := m.RunAll(); err != nil {
			return r, err
		}
		times[i] = time.Since(start)
		m.Reset()
	}
	slices.Sort(times)
	r.steady = times[len(times)/2]
	return r, nil
}

// transfers times placing a and b on the device and copying an n×n
// result back to the host.
func transfers(dev string, a, b *tensor.Dense) (toDevice, toHost time.Duration, err error) {
	var placed []*device.Tensor
	defer func() {
		for _, t := range placed {
			_ = t.Free()
		}
	}()
	for _, m := range []*tensor.Dense{a, b} {
		t, stats, err := device.Place(m, dev)
		if err != nil {
			return 0, 0, err
		}
		placed = append(placed, t)
		toDevice += stats.Duration
	}
	back, stats, err := device.Copy(placed[0], "/CPU:0")
	if err != nil {
		return 0, 0, err
	}
	placed = append(placed, back)
	return toDevice, stats.Duration, nil
}

// checkProduct compares a few entries of c with dot products computed in
// float64, so a wrong product is never timed as a fast one.
func checkProduct(a, b *tensor.Dense, c gorgonia.Value, n int) error {
	ct, ok := c.(*tensor.Dense)
	if !ok {
		return fmt.Errorf("the product is a %T, want a tensor", c)
	}
	ad, bd, cd := a.Data().([]float32), b.Data().([]float32), ct.Data().([]float32)
	if len(cd) != n*n {
		return fmt.Errorf("the product has %d values, want %d", len(cd), n*n)
	}
	for _, ij := range [][2]int{{0, 0}, {n - 1, n - 1}, {n / 2, n / 3}, {n / 3, n - 1}} {
		i, j := ij[0], ij[1]
		var want, scale float64
		for k := 0; k < n; k++ {
			p := float64(ad[i*n+k]) * float64(bd[k*n+j])
			want += p
			scale += math.Abs(p)
		}
		if got := float64(cd[i*n+j]); math.Abs(got-want) > 1e-4*scale+1e-6 {
			return fmt.Errorf("C[%d][%d] = %v, want %v: the device computed a wrong product", i, j, got, want)
		}
	}
	return nil
}

// short writes a duration with three significant digits.
func short(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.3gµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3gs", d.Seconds())
}

// writeChart draws time (first call dashed, steady solid) and GFLOP/s
// against n, one colour per device, on logarithmic axes.
func writeChart(path string, results []result, devs []string) error {
	timePanel := chart.Panel{Title: "Matrix multiplication time", XLabel: "n (n×n float32)", YLabel: "seconds", LogX: true, LogY: true, LegendLeft: true}
	ratePanel := chart.Panel{Title: "Throughput", XLabel: "n (n×n float32)", YLabel: "GFLOP/s", LogX: true, LegendLeft: true}
	for _, d := range devs {
		steady := chart.Series{Name: d + " steady"}
		first := chart.Series{Name: d + " first call", Dashed: true}
		rate := chart.Series{Name: d}
		for _, r := range results {
			if r.device != d || r.steady <= 0 || r.first <= 0 {
				continue
			}
			x := float64(r.n)
			steady.X, steady.Y = append(steady.X, x), append(steady.Y, r.steady.Seconds())
			first.X, first.Y = append(first.X, x), append(first.Y, r.first.Seconds())
			rate.X, rate.Y = append(rate.X, x), append(rate.Y, r.gflops())
		}
		timePanel.Series = append(timePanel.Series, steady, first)
		ratePanel.Series = append(ratePanel.Series, rate)
	}
	if len(results) == 0 {
		return errors.New("no results to chart")
	}
	return chart.SavePNG(path, 1100, 450, timePanel, ratePanel)
}
