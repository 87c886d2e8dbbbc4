package nn_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// cancelAt cancels the context at the end of one batch of one epoch, as a
// Ctrl-C arriving during that step would.
type cancelAt struct {
	nn.CallbackBase
	epoch, batch int
	cancel       context.CancelFunc
	current      int
}

func (c *cancelAt) OnEpochBegin(e int, _ nn.Logs) error { c.current = e; return nil }
func (c *cancelAt) OnTrainBatchEnd(b int, _ nn.Logs) error {
	if c.current == c.epoch && b == c.batch {
		c.cancel()
	}
	return nil
}

func TestResumedRunEqualsUninterruptedRun(t *testing.T) {
	optimizers := map[string]func() optim.Optimizer{
		"sgd": func() optim.Optimizer { o, _ := optim.NewSGD(optim.SGDConfig{LearningRate: 0.05}); return o },
		"sgd nesterov": func() optim.Optimizer {
			o, _ := optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.8, Nesterov: true})
			return o
		},
		"sgd momentum": func() optim.Optimizer {
			o, _ := optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9})
			return o
		},
		"adam": func() optim.Optimizer { o, _ := optim.NewAdam(optim.AdamConfig{}); return o },
	}
	data := blobs(t, 100, 6, 3, true) // 7 steps at batch 16, the last of 4
	const epochs, seed = 3, 7
	for name, newOpt := range optimizers {
		t.Run(name, func(t *testing.T) {
			newModel := func(initSeed uint64) *nn.Sequential {
				m := nn.NewSequential(layers.Input(6), layers.Dense(12, layers.ReLU), layers.Dense(10, layers.Softmax))
				m.SetSeed(initSeed)
				if err := m.Compile(newOpt(), losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
					t.Fatal(err)
				}
				return m
			}
			fit := func(ctx context.Context, m *nn.Sequential, opts ...nn.Option) (*nn.History, error) {
				opts = append([]nn.Option{nn.Epochs(epochs), nn.BatchSize(16), nn.Seed(seed), nn.Verbose(0)}, opts...)
				return m.Fit(ctx, data, opts...)
			}
			whole := newModel(1)
			if _, err := fit(context.Background(), whole); err != nil {
				t.Fatal(err)
			}
			want := flatWeights(t, whole)

			for _, stop := range []struct {
				name         string
				epoch, batch int // where the interruption comes
				resumeStep   int
			}{
				{"at an epoch boundary", 0, 6, 0}, // after the last step of epoch 0: stops before epoch 1
				{"mid-epoch", 1, 3, 4},
			} {
				t.Run(stop.name, func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					first := newModel(1)
					var out bytes.Buffer
					_, err := fit(ctx, first, nn.Verbose(1), nn.Output(&out), nn.Callbacks(&cancelAt{epoch: stop.epoch, batch: stop.batch, cancel: cancel}))
					var ie *nn.InterruptedError
					if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) {
						t.Fatalf("interrupted Fit returned %v, want an *InterruptedError wrapping context.Canceled", err)
					}
					wantEpoch := stop.epoch
					if stop.resumeStep == 0 {
						wantEpoch++
					}
					if ie.Epoch != wantEpoch || ie.Step != stop.resumeStep {
						t.Fatalf("interrupted at epoch %d step %d, want %d and %d", ie.Epoch, ie.Step, wantEpoch, stop.resumeStep)
					}
					if stop.resumeStep > 0 && !strings.Contains(out.String(), "4/7 [") {
						t.Errorf("the progress line should end at step 4/7:\n%s", out.String())
					}
					path := filepath.Join(t.TempDir(), "ck.safetensors")
					if err := first.SaveCheckpoint(path, nn.Checkpoint{Epoch: ie.Epoch, Step: ie.Step}); err != nil {
						t.Fatal(err)
					}

					resumed := newModel(99) // other initial weights: all must come from the checkpoint
					ck, err := resumed.LoadCheckpoint(path)
					if err != nil {
						t.Fatal(err)
					}
					hist, err := fit(context.Background(), resumed, nn.InitialEpoch(ck.Epoch), nn.InitialStep(ck.Step))
					if err != nil {
						t.Fatal(err)
					}
					if hist.Epochs[0] != ck.Epoch || hist.Epochs[len(hist.Epochs)-1] != epochs-1 {
						t.Errorf("resumed run trained epochs %v", hist.Epochs)
					}
					if got := flatWeights(t, resumed); !slices.Equal(got, want) {
						t.Error("the resumed run ended with other weights than the uninterrupted one")
					}
				})
			}
		})
	}
}

func TestInitialStepMustBeInTheEpoch(t *testing.T) {
	m := tinyModel(t, 0.1)
	_, err := m.Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.InitialStep(2), nn.Verbose(0))
	if err == nil || !strings.Contains(err.Error(), "initial step 2") {
		t.Errorf("error %v, want one about the initial step", err)
	}
}
