package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestWindowPlacementFollowsTensorFlow(t *testing.T) {
	tests := []struct {
		name           string
		size, k, s, d  int
		same           bool
		out, padBefore int
	}{
		{"valid 32 k3", 32, 3, 1, 1, false, 30, 0},
		{"same 32 k3", 32, 3, 1, 1, true, 32, 1},
		{"same 15 k3", 15, 3, 1, 1, true, 15, 1},
		{"valid pool 30 k2 s2", 30, 2, 2, 1, false, 15, 0},
		{"valid pool 13 k2 s2 drops the last row", 13, 2, 2, 1, false, 6, 0},
		{"same 5 k2 s2: one padding row, at the bottom", 5, 2, 2, 1, true, 3, 0},
		{"same 6 k3 s2: extra padding at the bottom", 6, 3, 2, 1, true, 3, 0},
		{"same 7 k4 s1: 3 rows, 1 above", 7, 4, 1, 1, true, 7, 1},
		{"valid 9 k3 d2", 9, 3, 1, 2, false, 5, 0},
		{"same 9 k3 d2", 9, 3, 1, 2, true, 9, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, pad, err := placeAxis("height", tc.size, tc.k, tc.s, tc.d, tc.same)
			if err != nil {
				t.Fatal(err)
			}
			if out != tc.out || pad != tc.padBefore {
				t.Errorf("got %d positions, padding %d before; want %d, %d", out, pad, tc.out, tc.padBefore)
			}
		})
	}
	if _, err := (WindowSpec{Kernel: [2]int{5, 5}}).On(1, 4, 4, 1); err == nil {
		t.Error("a 5x5 valid window on 4x4 images was accepted")
	}
}

func TestPatchesAndPoolValuesByHand(t *testing.T) {
	// One 3x3 image of 2 channels: channel 0 holds 1..9, channel 1 their negatives.
	x := make([]float64, 18)
	for i := 0; i < 9; i++ {
		x[2*i], x[2*i+1] = float64(i+1), -float64(i+1)
	}
	win, err := WindowSpec{Kernel: [2]int{2, 2}, Same: true}.On(1, 3, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	cols := make([]float64, win.Positions()*win.PatchSize())
	patches(win, x, cols)
	// Position (1, 2): pixels (1,2), (1,3)=pad, (2,2), (2,3)=pad.
	at := (1*3 + 2) * 8
	want := []float64{6, -6, 0, 0, 9, -9, 0, 0}
	for i, v := range want {
		if cols[at+i] != v {
			t.Fatalf("patch at (1,2) = %v, want %v", cols[at:at+8], want)
		}
	}
	y := make([]float64, 9*2)
	pool(MaxPool, win, x, y)
	if y[(1*3+2)*2] != 9 || y[(1*3+2)*2+1] != -6 {
		t.Errorf("max pool at (1,2) = %v, want [9 -6]", y[(1*3+2)*2:][:2])
	}
	pool(AvgPool, win, x, y)
	if y[(2*3+2)*2] != 9 { // the corner: only pixel (2,2) is inside
		t.Errorf("average pool at the corner = %v, want 9 (padding left out)", y[(2*3+2)*2])
	}
	if got := y[0]; got != (1.0+2+4+5)/4 {
		t.Errorf("average pool at (0,0) = %v, want 3", got)
	}
}

func TestConvolutionMatchesDirectSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, spec := range []WindowSpec{
		{Kernel: [2]int{3, 3}},
		{Kernel: [2]int{3, 3}, Same: true},
		{Kernel: [2]int{2, 3}, Strides: [2]int{2, 1}, Same: true},
		{Kernel: [2]int{3, 2}, Dilation: [2]int{2, 2}, Same: true},
	} {
		const b, h, w, c, f = 2, 6, 5, 3, 4
		win, err := spec.On(b, h, w, c)
		if err != nil {
			t.Fatal(err)
		}
		x := randomData(rng, b*h*w*c, 1)
		k := randomData(rng, win.PatchSize()*f, 1)
		cols := make([]float64, win.Positions()*win.PatchSize())
		patches(win, x, cols)
		for p := 0; p < win.Positions(); p++ {
			bi, oh, ow := p/(win.OH*win.OW), p/win.OW%win.OH, p%win.OW
			for fi := 0; fi < f; fi++ {
				var direct, viaCols float64
				for kh := 0; kh < win.KH; kh++ {
					for kw := 0; kw < win.KW; kw++ {
						ih, iw := oh*win.StrideH+kh*win.DilationH-win.PadTop, ow*win.StrideW+kw*win.DilationW-win.PadLeft
						for ci := 0; ci < c; ci++ {
							kv := k[((kh*win.KW+kw)*c+ci)*f+fi]
							if ih >= 0 && ih < h && iw >= 0 && iw < w {
								direct += x[((bi*h+ih)*w+iw)*c+ci] * kv
							}
						}
					}
				}
				for j := 0; j < win.PatchSize(); j++ {
					viaCols += cols[p*win.PatchSize()+j] * k[j*f+fi]
				}
				if math.Abs(direct-viaCols) > 1e-12 {
					t.Fatalf("%+v: output %d,%d differs: %v vs %v", spec, p, fi, direct, viaCols)
				}
			}
		}
	}
}

func TestGradientsOfImageOps(t *testing.T) {
	type build func(g *gorgonia.ExprGraph, rng *rand.Rand) (*gorgonia.Node, []*gorgonia.Node, error)
	conv := func(h, w int, spec WindowSpec) build {
		return func(g *gorgonia.ExprGraph, rng *rand.Rand) (*gorgonia.Node, []*gorgonia.Node, error) {
			const b, c, f = 2, 2, 3
			x := matrix(g, "x", tensor.Shape{b, h, w, c}, randomData(rng, b*h*w*c, 1))
			k := matrix(g, "k", tensor.Shape{spec.Kernel[0] * spec.Kernel[1] * c, f}, randomData(rng, spec.Kernel[0]*spec.Kernel[1]*c*f, 1))
			bias := matrix(g, "b", tensor.Shape{f}, randomData(rng, f, 1))
			cols, err := Patches(x, spec, true)
			if err != nil {
				return nil, nil, err
			}
			z, err := Affine(cols, k, bias, true)
			if err != nil {
				return nil, nil, err
			}
			win, _ := spec.On(b, h, w, c)
			img, err := Reshape(z, []int{b, win.OH, win.OW, f}, true)
			if err != nil {
				return nil, nil, err
			}
			flat, err := Flatten(img, true)
			if err != nil {
				return nil, nil, err
			}
			tn := matrix(g, "target", flat.Shape().Clone(), randomData(rng, flat.Shape().TotalSize(), 1))
			cost, err := Loss(MeanSquaredError, flat, tn)
			return cost, []*gorgonia.Node{x, k, bias}, err
		}
	}
	pooling := func(kind PoolKind, h, w int, spec WindowSpec) build {
		return func(g *gorgonia.ExprGraph, rng *rand.Rand) (*gorgonia.Node, []*gorgonia.Node, error) {
			const b, c = 2, 3
			// Distinct values, so that no window has a tie for its maximum
			// and the finite differences stay on one side of every kink.
			data := make([]float64, b*h*w*c)
			for i, p := range rng.Perm(len(data)) {
				data[i] = float64(p)/float64(len(data)) - 0.5
			}
			x := matrix(g, "x", tensor.Shape{b, h, w, c}, data)
			y, err := Pool(x, kind, spec, true)
			if err != nil {
				return nil, nil, err
			}
			flat, err := Flatten(y, true)
			if err != nil {
				return nil, nil, err
			}
			tn := matrix(g, "target", flat.Shape().Clone(), randomData(rng, flat.Shape().TotalSize(), 1))
			cost, err := Loss(MeanSquaredError, flat, tn)
			return cost, []*gorgonia.Node{x}, err
		}
	}
	dropout := func(g *gorgonia.ExprGraph, rng *rand.Rand) (*gorgonia.Node, []*gorgonia.Node, error) {
		x := matrix(g, "x", tensor.Shape{4, 6}, randomData(rng, 24, 1))
		sv := StepValues(7, 3)
		step := matrix(g, "step", tensor.Shape{4}, []float64{float64(sv[0]), float64(sv[1]), float64(sv[2]), float64(sv[3])})
		y, err := Dropout(x, step, DropoutParams{Rate: 0.5, Key: 99})
		if err != nil {
			return nil, nil, err
		}
		tn := matrix(g, "target", tensor.Shape{4, 6}, randomData(rng, 24, 1))
		cost, err := Loss(MeanSquaredError, y, tn)
		return cost, []*gorgonia.Node{x}, err
	}
	k := func(h, w int) [2]int { return [2]int{h, w} }
	tests := []struct {
		name  string
		build build
	}{
		{"conv valid 5x6 k3", conv(5, 6, WindowSpec{Kernel: k(3, 3)})},
		{"conv same odd 5x5 k3", conv(5, 5, WindowSpec{Kernel: k(3, 3), Same: true})},
		{"conv same even 6x4 k2", conv(6, 4, WindowSpec{Kernel: k(2, 2), Same: true})},
		{"conv same k4 (more padding after)", conv(5, 5, WindowSpec{Kernel: k(4, 4), Same: true})},
		{"conv strides 2 same", conv(7, 6, WindowSpec{Kernel: k(3, 3), Strides: k(2, 2), Same: true})},
		{"conv strides 2 valid", conv(7, 6, WindowSpec{Kernel: k(3, 2), Strides: k(2, 2)})},
		{"conv dilation 2", conv(7, 7, WindowSpec{Kernel: k(3, 3), Dilation: k(2, 2)})},
		{"conv dilation 2 same", conv(6, 5, WindowSpec{Kernel: k(3, 3), Dilation: k(2, 1), Same: true})},
		{"max pool 2x2", pooling(MaxPool, 6, 6, WindowSpec{Kernel: k(2, 2), Strides: k(2, 2)})},
		{"max pool odd valid", pooling(MaxPool, 5, 7, WindowSpec{Kernel: k(2, 2), Strides: k(2, 2)})},
		{"max pool same overlapping", pooling(MaxPool, 5, 5, WindowSpec{Kernel: k(3, 3), Strides: k(2, 2), Same: true})},
		{"average pool 2x2", pooling(AvgPool, 4, 6, WindowSpec{Kernel: k(2, 2), Strides: k(2, 2)})},
		{"average pool same", pooling(AvgPool, 5, 5, WindowSpec{Kernel: k(3, 3), Strides: k(2, 2), Same: true})},
		{"global average pool", pooling(AvgPool, 3, 4, WindowSpec{Kernel: k(3, 4)})},
		{"dropout", dropout},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			cost, wrt, err := tc.build(g, rand.New(rand.NewPCG(uint64(i), 11)))
			if err != nil {
				t.Fatal(err)
			}
			checkGradients(t, g, cost, wrt...)
		})
	}
}

func TestPhiloxKnownAnswers(t *testing.T) {
	// Random123's known-answer vectors for philox4x32_10.
	tests := []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{}, [2]uint32{}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, tc := range tests {
		if got := Philox4x32(tc.ctr, tc.key); got != tc.want {
			t.Errorf("Philox4x32(%#x, %#x) = %#x, want %#x", tc.ctr, tc.key, got, tc.want)
		}
	}
}

func TestDropoutStatistics(t *testing.T) {
	const n = 1_000_000
	for _, rate := range []float64{0.1, 0.25, 0.5, 0.9} {
		p := DropoutParams{Rate: rate, Key: 12345}
		x := make([]float32, n)
		for i := range x {
			x[i] = 1
		}
		y := make([]float32, n)
		s3, s4 := StepValues(3, 0), StepValues(4, 0)
		DropoutForward(p, s3[:], 1, x, y)
		dropped := 0
		scale := float32(1 / (1 - rate))
		for _, v := range y {
			switch v {
			case 0:
				dropped++
			case scale:
			default:
				t.Fatalf("rate %v: a kept unit is %v, want %v", rate, v, scale)
			}
		}
		if got := float64(dropped) / n; math.Abs(got-rate) > 0.01*rate {
			t.Errorf("rate %v: dropped %.4f of the units", rate, got)
		}
		// Another step drops other units; the same step the same ones.
		y2 := make([]float32, n)
		DropoutForward(p, s4[:], 1, x, y2)
		same := 0
		for i := range y {
			if (y[i] == 0) == (y2[i] == 0) {
				same++
			}
		}
		if want := rate*rate + (1-rate)*(1-rate); math.Abs(float64(same)/n-want) > 0.01 {
			t.Errorf("rate %v: steps 3 and 4 agree on %.4f of the units, want about %.4f (independent masks)", rate, float64(same)/n, want)
		}
		DropoutForward(p, s3[:], 1, x, y2)
		for i := range y {
			if y[i] != y2[i] {
				t.Fatalf("rate %v: step 3 twice gave different masks at %d", rate, i)
			}
		}
	}
}

func TestStepValuesRoundTrip(t *testing.T) {
	for _, s := range []uint64{0, 1, 1<<24 - 1, 1 << 24, 123456789012, 1<<48 - 1} {
		for _, row := range []int{0, 17, 1<<24 + 5} {
			v := StepValues(s, row)
			var f [4]float64
			for i := range f {
				f[i] = float64(v[i])
			}
			if step, first := stepOf(f, 3); step != s || first != 3*row {
				t.Errorf("step %d, row %d came back as step %d, first unit %d (want %d)", s, row, step, first, 3*row)
			}
		}
	}
}

// A batch cut into shards, each dropped with its first row in the step
// values, drops what the whole batch drops: the replicas of a
// data-parallel step drop the units one process drops.
func TestDropoutShardsMatchTheWholeBatch(t *testing.T) {
	p := DropoutParams{Rate: 0.4, Key: 7}
	const rows, units = 33, 7 // 7 units a row: shards start off Philox's blocks of 4
	x := make([]float32, rows*units)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	whole := make([]float32, len(x))
	sv := StepValues(9, 0)
	DropoutForward(p, sv[:], units, x, whole)
	for _, cuts := range [][]int{{0, 16, 33}, {0, 11, 22, 33}, {0, 1, 2, 33}} {
		got := make([]float32, len(x))
		for i := 0; i+1 < len(cuts); i++ {
			lo, hi := cuts[i]*units, cuts[i+1]*units
			sv := StepValues(9, cuts[i])
			DropoutForward(p, sv[:], units, x[lo:hi], got[lo:hi])
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(whole[i]) {
				t.Fatalf("shards %v: unit %d is %v, the whole batch's %v", cuts, i, got[i], whole[i])
			}
		}
	}
}

// Max pooling's gradient goes to the first maximum of each window in
// reading order (TensorFlow's rule), channel by channel, and a window
// whose maximum is NaN passes none; overlapping windows add up.
func TestMaxPoolGradientGoesToFirstMaximum(t *testing.T) {
	tests := []struct {
		name    string
		spec    WindowSpec
		h, w, c int
		x, dy   []float32
		wantDx  []float32
	}{
		{
			name: "2x2, ties in both channels",
			spec: WindowSpec{Kernel: [2]int{2, 2}, Strides: [2]int{2, 2}},
			h:    2, w: 2, c: 2,
			// pixels in reading order, two channels each
			x:      []float32{1, 5, 3, 5, 3, 2, 0, 5},
			dy:     []float32{10, 20},
			wantDx: []float32{0, 20, 10, 0, 0, 0, 0, 0},
		},
		{
			name: "NaN maximum passes nothing",
			spec: WindowSpec{Kernel: [2]int{1, 2}, Strides: [2]int{1, 2}},
			h:    1, w: 2, c: 1,
			x:      []float32{float32(math.NaN()), 1},
			dy:     []float32{7},
			wantDx: []float32{0, 0},
		},
		{
			name: "overlapping windows share a maximum",
			spec: WindowSpec{Kernel: [2]int{1, 2}, Strides: [2]int{1, 1}},
			h:    1, w: 3, c: 1,
			x:      []float32{1, 9, 2},
			dy:     []float32{3, 4},
			wantDx: []float32{0, 7, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			win, err := tt.spec.On(1, tt.h, tt.w, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			y := make([]float32, win.Positions()*win.C)
			pool(MaxPool, win, tt.x, y)
			dx := make([]float32, len(tt.x))
			for i := range dx {
				dx[i] = -1 // poolBack overwrites
			}
			poolBack(MaxPool, win, tt.x, y, tt.dy, dx)
			for i := range dx {
				if dx[i] != tt.wantDx[i] {
					t.Fatalf("dx = %v, want %v", dx, tt.wantDx)
				}
			}
		})
	}
}

// The float32 dropout keeps and scales exactly the units DropoutMask
// keeps and writes +0 for the others, whatever they held (NaN, ±Inf, -0),
// on lengths that end inside a Philox block and span several chunks.
func TestDropout32MatchesDropoutMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	p := DropoutParams{Rate: 0.3, Key: 0x1234_5678_9abc_def0}
	for _, n := range []int{1, 5, 4096, 4099, 10001, 70001} { // 70001: chunks on several workers
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1))}
		for i, v := range specials {
			if i < n {
				x[n-1-i] = v
			}
		}
		const step = 77
		y := make([]float32, n)
		const first = 4097 // units of earlier rows, off a block of 4
		dropout32(p, step, first, x, y)
		keep := make([]bool, n)
		DropoutMask(p, step, first, keep)
		scale := float32(p.Scale())
		for i := range x {
			want := float32(0)
			if keep[i] {
				want = x[i] * scale
			}
			if math.Float32bits(y[i]) != math.Float32bits(want) && !(math.IsNaN(float64(y[i])) && math.IsNaN(float64(want))) {
				t.Fatalf("n=%d: y[%d] = %v, want %v (x %v, kept %v)", n, i, y[i], want, x[i], keep[i])
			}
		}
	}
}
