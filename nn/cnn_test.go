package nn

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// cifar10CNN is the classic Keras cifar10_cnn example's model.
func cifar10CNN(dropout float64) *Sequential {
	return NewSequential(
		layers.Input(32, 32, 3),
		layers.Conv2D(32, 3, layers.Padding("same"), layers.ReLU),
		layers.Conv2D(32, 3, layers.ReLU),
		layers.MaxPooling2D(),
		layers.Dropout(0.25*dropout),
		layers.Conv2D(64, 3, layers.Padding("same"), layers.ReLU),
		layers.Conv2D(64, 3, layers.ReLU),
		layers.MaxPooling2D(),
		layers.Dropout(0.25*dropout),
		layers.Flatten(),
		layers.Dense(512, layers.ReLU),
		layers.Dropout(0.5*dropout),
		layers.Dense(10, layers.Softmax),
	)
}

func TestSummaryOfTheKerasCIFAR10CNN(t *testing.T) {
	m := cifar10CNN(1)
	var b bytes.Buffer
	if err := m.Summary(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"conv2d (Conv2D)", "(None, 32, 32, 32)", "896",
		"conv2d_1 (Conv2D)", "(None, 30, 30, 32)", "9248",
		// Keras cuts a name too long for its column and goes on below.
		" max_pooling2d (MaxPooling2D  (None, 15, 15, 32)       0         \n )      ",
		"dropout (Dropout)",
		"conv2d_2 (Conv2D)", "(None, 15, 15, 64)", "18496",
		"conv2d_3 (Conv2D)", "(None, 13, 13, 64)", "36928",
		" max_pooling2d_1 (MaxPooling  (None, 6, 6, 64)         0         \n 2D)    ",
		"dropout_1 (Dropout)", "flatten (Flatten)", "(None, 2304)",
		"dense (Dense)", "(None, 512)", "1180160",
		"dropout_2 (Dropout)", "dense_1 (Dense)", "5130",
		"Total params: 1,250,858", "Trainable params: 1,250,858", "Non-trainable params: 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
}

// PReLU's parameters are its alpha's, as Keras counts them: the sample's
// values, but one per channel with shared_axes [1, 2]; LeakyReLU and ELU
// have none.
func TestSummaryOfTheAdvancedActivations(t *testing.T) {
	m := NewSequential(layers.Input(6, 5, 3), layers.NewPReLU(layers.SharedAxes(1, 2)), layers.NewPReLU(),
		layers.NewLeakyReLU(0.3), layers.NewELU(1), layers.Flatten(), layers.Dense(2), layers.NewPReLU())
	var b bytes.Buffer
	if err := m.Summary(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		" p_re_lu (PReLU)             (None, 6, 5, 3)           3         \n",
		" p_re_lu_1 (PReLU)           (None, 6, 5, 3)           90        \n",
		" leaky_re_lu (LeakyReLU)     (None, 6, 5, 3)           0         \n",
		" elu (ELU)                   (None, 6, 5, 3)           0         \n",
		" p_re_lu_2 (PReLU)           (None, 2)                 2         \n",
		"Total params: 277", "Trainable params: 277",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
}

func TestKerasLayerNames(t *testing.T) {
	for typ, want := range map[string]string{
		"Dense": "dense", "Conv2D": "conv2d", "Conv1D": "conv1d", "MaxPooling2D": "max_pooling2d",
		"GlobalAveragePooling2D": "global_average_pooling2d", "BatchNormalization": "batch_normalization",
		"InputLayer": "input_layer", "Dropout": "dropout", "ZeroPadding2D": "zero_padding2d", "Cropping2D": "cropping2d",
		"UpSampling2D": "up_sampling2d", "Identity": "identity", "ReLU": "re_lu",
		"LeakyReLU": "leaky_re_lu", "ELU": "elu", "PReLU": "p_re_lu",
	} {
		if got := snakeCase(typ); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", typ, got, want)
		}
	}
}

// TestImageLayersMatchTapeMachine trains small convolutional models with
// every image layer on the plan machine and on gorgonia's tape machine
// from the same weights on the same batches, and compares every step's
// loss within 1e-5 relative, the final weights, and Evaluate.
func TestImageLayersMatchTapeMachine(t *testing.T) {
	models := map[string]func() *Sequential{
		"conv same, conv, max pool, dropout, dense": func() *Sequential {
			return NewSequential(layers.Input(8, 8, 3),
				layers.Conv2D(4, 3, layers.Padding("same"), layers.ReLU),
				layers.Conv2D(6, 3, layers.ReLU),
				layers.MaxPooling2D(),
				layers.Dropout(0.3),
				layers.Flatten(),
				layers.Dense(10, layers.Softmax))
		},
		"strides, dilation, average pool same, global pools": func() *Sequential {
			return NewSequential(layers.Input(9, 8, 3),
				layers.Conv2D(5, 3, layers.Strides(2, 1), layers.Padding("same"), layers.Tanh),
				layers.Conv2D(4, 2, layers.DilationRate(2), layers.Padding("same"), layers.ReLU, layers.WithoutBias()),
				layers.AveragePooling2D(layers.PoolSize(3), layers.Strides(2), layers.Padding("same")),
				layers.Conv2D(8, 1),
				layers.GlobalAveragePooling2D(),
				layers.Dropout(0.5),
				layers.Dense(10, layers.Softmax))
		},
		"stride-1 convs of 8 channels and more (the CPU's kernels without patches)": func() *Sequential {
			return NewSequential(layers.Input(8, 8, 3),
				layers.Conv2D(8, 3, layers.Padding("same"), layers.ReLU),
				layers.Conv2D(12, 3, layers.Padding("same"), layers.ReLU),
				layers.Conv2D(9, 3, layers.ReLU),
				layers.Conv2D(16, 2, layers.Padding("same")),
				layers.GlobalAveragePooling2D(),
				layers.Dense(10, layers.Softmax))
		},
		"strided convs of 8 channels and more (the CPU's kernels without patches)": func() *Sequential {
			return NewSequential(layers.Input(8, 16, 3),
				layers.Conv2D(8, 3, layers.Padding("same"), layers.ReLU),
				layers.Conv2D(16, 3, layers.Strides(2), layers.Padding("same"), layers.ReLU),
				layers.Conv2D(16, 1, layers.Strides(2), layers.Padding("same")),
				layers.Flatten(),
				layers.Dense(10, layers.Softmax))
		},
		"1D convs of 8 channels and more (the CPU's kernels without patches)": func() *Sequential {
			return NewSequential(layers.Input(8, 8, 3),
				layers.Reshape([]int{16, -1}),
				layers.Conv1D(8, 3, layers.Padding("same"), layers.ReLU),
				layers.Conv1D(10, 3, layers.ReLU),
				layers.GlobalMaxPooling1D(),
				layers.Dense(10, layers.Softmax))
		},
		"1D: reshape, conv1d, max pool 1d, global max": func() *Sequential {
			return NewSequential(layers.Input(8, 8, 3),
				layers.Reshape([]int{16, -1}),
				layers.Conv1D(6, 3, layers.Padding("same"), layers.ReLU),
				layers.MaxPooling1D(layers.PoolSize(3), layers.Strides(2)),
				layers.Conv1D(6, 2, layers.Strides(2)),
				layers.GlobalMaxPooling1D(),
				layers.Dense(10, layers.Softmax))
		},
	}
	opts := map[string]func() (optim.Optimizer, error){
		"sgd": func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05}) },
		"momentum": func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9})
		},
		"adam": func() (optim.Optimizer, error) { return optim.NewAdam(optim.AdamConfig{}) },
	}
	for name, build := range models {
		for oname, newOpt := range opts {
			t.Run(name+"/"+oname, func(t *testing.T) {
				h, w := 8, 8
				switch {
				case strings.HasPrefix(name, "strides"):
					h = 9
				case strings.HasPrefix(name, "strided"):
					w = 16
				}
				ds := imageData(t, 100, h, w, 3, 5, true)
				var ms [2]*Sequential
				for i, reference := range []bool{true, false} {
					opt, err := newOpt()
					if err != nil {
						t.Fatal(err)
					}
					m := build()
					m.SetSeed(7)
					if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, OnDevice("/CPU:0")); err != nil {
						t.Fatal(err)
					}
					m.compiled.reference = reference
					if err := m.checkData("test", ds); err != nil {
						t.Fatal(err)
					}
					defer m.Close()
					ms[i] = m
				}
				if _, err := ms[1].program(32, labelLayout{cols: 10}, modeTrain); err != nil {
					t.Fatal(err)
				}
				requirePlanMachines(t, ms[1])
				order := rand.New(rand.NewPCG(1, 2)).Perm(ds.Len())
				var first, last float64
				for step := 0; step < 12; step++ {
					lo := (step * 32) % 96
					idx := order[lo:min(lo+32, ds.Len())]
					var loss [2]float64
					for i, m := range ms {
						p, err := m.program(len(idx), labelLayout{cols: 10}, modeTrain)
						if err != nil {
							t.Fatal(err)
						}
						if loss[i], err = m.trainStep(p, ds, idx); err != nil {
							t.Fatal(err)
						}
					}
					if rel := math.Abs(loss[1]-loss[0]) / math.Abs(loss[0]); !(rel <= 1e-5) {
						t.Fatalf("step %d: plan machine loss %.9g, tape machine %.9g (relative difference %.2g)", step, loss[1], loss[0], rel)
					}
					if step == 0 {
						first = loss[0]
					}
					last = loss[0]
				}
				if !(last < first) {
					t.Errorf("the loss did not fall: %v -> %v", first, last)
				}
				for li, l := range ms[0].layers {
					for pi, prm := range l.Params() {
						want := prm.Value.Data().([]float32)
						got := ms[1].layers[li].Params()[pi].Value.Data().([]float32)
						for j := range want {
							if d := math.Abs(float64(got[j] - want[j])); d > 1e-5*(1+math.Abs(float64(want[j]))) {
								t.Fatalf("%s/%s[%d] = %v on the plan machine, %v on the tape machine", l.Name(), prm.Name, j, got[j], want[j])
							}
						}
					}
				}
				var ev [2]map[string]float64
				for i, m := range ms {
					r, err := m.Evaluate(context.Background(), ds, Verbose(0))
					if err != nil {
						t.Fatal(err)
					}
					ev[i] = r
				}
				if rel := math.Abs(ev[1]["loss"]-ev[0]["loss"]) / ev[0]["loss"]; !(rel <= 1e-5) {
					t.Errorf("Evaluate: loss %v on the plan machine, %v on the tape machine", ev[1]["loss"], ev[0]["loss"])
				}
			})
		}
	}
}

// TestDropoutOnlyInTraining checks that Evaluate and Predict see no
// dropout, and that a training step does.
func TestDropoutOnlyInTraining(t *testing.T) {
	ds := imageData(t, 64, 4, 4, 2, 3, true)
	run := func(rate float64) (eval float64, pred []float32, train float64) {
		m := NewSequential(layers.Input(4, 4, 2), layers.Flatten(), layers.Dense(16, layers.ReLU),
			layers.Dropout(rate, layers.Seed(5)), layers.Dense(10, layers.Softmax))
		m.SetSeed(3)
		opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 1e-9})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		r, err := m.Evaluate(context.Background(), ds, Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.PredictTensor(context.Background(), ds, Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		h, err := m.Fit(context.Background(), ds, Epochs(1), BatchSize(64), Verbose(0), Shuffle(false))
		if err != nil {
			t.Fatal(err)
		}
		return r["loss"], p.Data().([]float32), h.Get("loss")[0]
	}
	e0, p0, t0 := run(0)
	e1, p1, t1 := run(0.5)
	if e0 != e1 {
		t.Errorf("Evaluate: loss %v with dropout 0.5, %v without", e1, e0)
	}
	for i := range p0 {
		if p0[i] != p1[i] {
			t.Fatalf("Predict differs at %d: %v with dropout, %v without", i, p1[i], p0[i])
		}
	}
	if t0 == t1 {
		t.Errorf("training loss %v both with and without dropout: the dropout did nothing in Fit", t0)
	}
}

// BenchmarkCIFAR10CNNStep times training steps of Keras' cifar10_cnn at
// batch 32 with SGD on the CPU.
func BenchmarkCIFAR10CNNStep(b *testing.B) {
	ds := imageData(b, 32*8, 32, 32, 3, 1, true)
	m := cifar10CNN(1)
	m.SetSeed(1)
	opt, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if err := m.checkData("bench", ds); err != nil {
		b.Fatal(err)
	}
	p, err := m.program(32, labelLayout{cols: 10}, modeTrain)
	if err != nil {
		b.Fatal(err)
	}
	idx := make([]int, 32)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range idx {
			idx[j] = (i*32 + j) % ds.Len()
		}
		if _, err := m.trainStep(p, ds, idx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNormalizationAndEmbeddingMatchTapeMachine trains models with
// BatchNormalization, LayerNormalization and Embedding on the plan machine
// and on the tape machine and compares the losses, the weights (moving
// statistics included) and Evaluate.
func TestNormalizationAndEmbeddingMatchTapeMachine(t *testing.T) {
	type model struct {
		build func() *Sequential
		data  func(t testing.TB) data.Dataset
	}
	images := func(t testing.TB) data.Dataset { return imageData(t, 100, 8, 8, 3, 5, true) }
	cases := map[string]model{
		"conv, batch norm, relu": {func() *Sequential {
			return NewSequential(layers.Input(8, 8, 3),
				layers.Conv2D(4, 3, layers.Padding("same")),
				layers.BatchNormalization(),
				layers.NewActivation(layers.ReLU),
				layers.MaxPooling2D(),
				layers.Flatten(),
				layers.Dense(10, layers.Softmax))
		}, images},
		"dense, batch norm without center and scale, layer norm": {func() *Sequential {
			return NewSequential(layers.Input(8, 8, 3),
				layers.Flatten(),
				layers.Dense(16, layers.ReLU),
				layers.BatchNormalization(layers.WithoutCenter(), layers.WithoutScale(), layers.Momentum(0.9)),
				layers.Dense(12, layers.Tanh),
				layers.LayerNormalization(),
				layers.Dense(10, layers.Softmax))
		}, images},
		"embedding, global average pooling 1d": {func() *Sequential {
			return NewSequential(layers.Input(6),
				layers.Embedding(20, 8),
				layers.Conv1D(8, 3, layers.Padding("same"), layers.ReLU),
				layers.GlobalAveragePooling1D(),
				layers.Dense(10, layers.Softmax))
		}, func(t testing.TB) data.Dataset {
			rng := rand.New(rand.NewPCG(4, 4))
			x, y := make([]float32, 100*6), make([]float32, 100*10)
			for i := 0; i < 100; i++ {
				c := rng.IntN(10)
				for j := 0; j < 6; j++ {
					x[i*6+j] = float32((c + rng.IntN(3)*j) % 20)
				}
				y[i*10+c] = 1
			}
			d, err := data.TensorData(tensor.New(tensor.WithShape(100, 6), tensor.WithBacking(x)), tensor.New(tensor.WithShape(100, 10), tensor.WithBacking(y)))
			if err != nil {
				t.Fatal(err)
			}
			return d
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ds := tc.data(t)
			build := func() *Sequential {
				m := tc.build()
				m.SetSeed(9)
				return m
			}
			newOpt := func() (optim.Optimizer, error) {
				return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.5})
			}
			ms, loss := fitTwins(t, build, newOpt, losses.CategoricalCrossentropy{}, ds, Epochs(3), BatchSize(32), Seed(1))
			requireSameTraining(t, ms, loss)
			var ev [2]float64
			for i, m := range ms {
				r, err := m.Evaluate(context.Background(), ds, Verbose(0))
				if err != nil {
					t.Fatal(err)
				}
				ev[i] = r["loss"]
			}
			if rel := math.Abs(ev[1]-ev[0]) / ev[0]; !(rel <= 1e-5) {
				t.Errorf("Evaluate: loss %v on the plan machine, %v on the tape machine", ev[1], ev[0])
			}
		})
	}
}

// BatchNormalization's moving variance takes the batch variance as Keras 2
// does for the input's rank: with Bessel's correction (n/(n-1)) for rank 4
// and 5, which TensorFlow's fused kernel computes, and without it for the
// others, which tf.nn.moments computes. One step of momentum 0.5 over one
// channel of 8 values whose biased variance is 5.25.
func TestBatchNormalizationMovingVarianceByRank(t *testing.T) {
	values := []float32{0, 1, 2, 3, 4, 5, 6, 7}
	const biased = 5.25
	for _, tc := range []struct {
		name   string
		shape  []int // without the batch
		rows   int   // values per channel in the batch: 8
		bessel bool
	}{
		{"rank 2 (after Dense)", []int{1}, 8, false},
		{"rank 3 (after Conv1D)", []int{2, 1}, 8, false},
		{"rank 4 (after Conv2D)", []int{2, 2, 1}, 8, true},
		{"rank 5 (after Conv3D)", []int{2, 1, 2, 1}, 8, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			batch := tc.rows
			for _, d := range tc.shape {
				batch /= d
			}
			xs := tensor.New(tensor.WithShape(append([]int{batch}, tc.shape...)...), tensor.WithBacking(slices.Clone(values)))
			ys := tensor.New(tensor.WithShape(batch, tc.rows/batch), tensor.WithBacking(make([]float32, len(values))))
			ds, err := data.TensorData(xs, ys)
			if err != nil {
				t.Fatal(err)
			}
			bn := layers.BatchNormalization(layers.Momentum(0.5))
			m := NewSequential(layers.Input(tc.shape...), bn, layers.Flatten())
			opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 1e-12})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Compile(opt, losses.MeanSquaredError{}, nil, OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if _, err := m.Fit(context.Background(), ds, Epochs(1), BatchSize(batch), Shuffle(false), Verbose(0)); err != nil {
				t.Fatal(err)
			}
			v := biased
			if tc.bessel {
				v = biased * 8 / 7
			}
			want := 0.5*1 + 0.5*v
			got := float64(bn.Params()[3].Value.Data().([]float32)[0])
			if math.Abs(got-want) > 1e-6*want {
				t.Errorf("moving variance %v, want %v (Bessel's correction: %v)", got, want, tc.bessel)
			}
		})
	}
}

// TestBatchNormalizationMovingStatistics checks the moving statistics
// after training steps against the formula, and that Predict normalizes
// with them.
func TestBatchNormalizationMovingStatistics(t *testing.T) {
	const n = 64
	x := make([]float32, n*2)
	for i := 0; i < n; i++ {
		x[2*i], x[2*i+1] = float32(i), float32(3*(i%4))
	}
	y := make([]float32, n*2)
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	bn := layers.BatchNormalization()
	m := NewSequential(layers.Input(2), bn)
	opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(opt, losses.MeanSquaredError{}, nil, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const steps = 3
	if _, err := m.Fit(context.Background(), ds, Epochs(steps), BatchSize(n), Shuffle(false), Verbose(0)); err != nil {
		t.Fatal(err)
	}
	// Each step sees the whole data: means 31.5 and 4.5; variances
	// (n²-1)/12 and 11.25, biased as Keras 2 takes them for a rank-2
	// input (TestBatchNormalizationMovingVarianceByRank has rank 4).
	mean := []float64{31.5, 4.5}
	variance := []float64{float64(n*n-1) / 12, 11.25}
	ps := bn.Params()
	mm, mv := ps[2].Value.Data().([]float32), ps[3].Value.Data().([]float32)
	for c := 0; c < 2; c++ {
		keep := math.Pow(0.99, steps)
		wantMean := (1 - keep) * mean[c]
		wantVar := keep + (1-keep)*variance[c]
		if math.Abs(float64(mm[c])-wantMean) > 1e-4*wantMean || math.Abs(float64(mv[c])-wantVar) > 1e-4*wantVar {
			t.Errorf("channel %d: moving mean %v, variance %v; want %v, %v", c, mm[c], mv[c], wantMean, wantVar)
		}
	}
	pred, err := m.PredictTensor(context.Background(), ds, Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	out := pred.Data().([]float32)
	for i := 0; i < n; i++ {
		for c := 0; c < 2; c++ {
			want := (float64(x[2*i+c]) - float64(mm[c])) / math.Sqrt(float64(mv[c])+1e-3)
			if math.Abs(float64(out[2*i+c])-want) > 1e-4*(1+math.Abs(want)) {
				t.Fatalf("Predict[%d][%d] = %v, want %v from the moving statistics", i, c, out[2*i+c], want)
			}
		}
	}
	var b bytes.Buffer
	if err := m.Summary(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Trainable params: 4\nNon-trainable params: 4\n") {
		t.Errorf("summary:\n%s", b.String())
	}
}
