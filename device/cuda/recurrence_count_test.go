//go:build cudavm && cgo && kernelemu

package cuda

import (
	"fmt"
	"testing"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
)

// stepCalls is what one training step asked of the emulated GPU.
type stepCalls struct{ launches, products, hostCopies int64 }

func (c stepCalls) minus(d stepCalls) stepCalls {
	return stepCalls{c.launches - d.launches, c.products - d.products, c.hostCopies - d.hostCopies}
}

// recurrenceStepCalls counts the kernel launches, cuBLAS products and
// host copies of the second training step of opstest's recurrence graph
// over sequences of steps timesteps on /GPU:0.
func recurrenceStepCalls(t *testing.T, cell ops.RecurrenceCell, v opstest.RecurrenceVariant, steps int) stepCalls {
	t.Helper()
	v.Steps = steps
	m, err := opstest.BuildRecurrenceGraphWith(5, cell, 3, v)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	st := driver.NewState()
	defer st.Close()
	mach, err := device.NewMachine(device.NewSpec(driver.GPU, 0), m.G, driver.MachineOptions{Learnables: m.Learnables, State: st, Slots: opt.Slot})
	if err != nil {
		t.Fatal(err)
	}
	defer mach.Close()
	tr := mach.(driver.Trainer)
	var before stepCalls
	for i := range 2 {
		before = stepCalls{emuCalls.launches.Load(), emuCalls.products.Load(), emuCalls.hostCopies.Load()}
		if err := tr.Train(opt.NextUpdate()); err != nil {
			t.Fatal(err)
		}
		opt.Advance()
		if i == 0 {
			mach.Reset()
		}
	}
	return stepCalls{emuCalls.launches.Load(), emuCalls.products.Load(), emuCalls.hostCopies.Load()}.minus(before)
}

// TestRecurrenceCallsPerTimestep counts what a training step of each
// recurrent cell asks of the GPU for each timestep: the counts for 6, 12
// and 18 timesteps differ by the same amount per 6 (so the work per
// timestep is fixed), the weights stay on the device (no host copy grows
// with the sequence), and the kernel launches and cuBLAS products per
// timestep, forward and backward together, are those the backend's
// recurrence describes (recurrence.go), at most each case's counts: one
// gk_rec_fwd and one gk_rec_bwd, the state's product with the recurrent
// kernel, and back the products carrying the gradient to the previous
// state and into the recurrent kernel's gradient (and a GRU's recurrent
// bias').
func TestRecurrenceCallsPerTimestep(t *testing.T) {
	needGPU(t)
	for _, c := range []struct {
		cell               ops.RecurrenceCell
		v                  opstest.RecurrenceVariant
		launches, products int64 // per timestep, forward and backward
	}{
		{ops.RNNCell, opstest.RecurrenceVariant{}, 2, 3},
		{ops.LSTMCell, opstest.RecurrenceVariant{}, 2, 3},
		{ops.GRUCell, opstest.RecurrenceVariant{}, 2, 4},
		// Recurrent dropout: per gate, the state masked, its product and
		// the product's columns copied into z (recDropProduct), and back.
		{ops.LSTMCell, opstest.RecurrenceVariant{RecDropped: true}, 26, 12},
		{ops.LSTMCell, opstest.RecurrenceVariant{Sequences: true, Masked: true, Init: true}, 2, 3},
		{ops.GRUBeforeCell, opstest.RecurrenceVariant{}, 4, 6},
	} {
		t.Run(fmt.Sprintf("%v/%+v", c.cell, c.v), func(t *testing.T) {
			at6 := recurrenceStepCalls(t, c.cell, c.v, 6)
			at12 := recurrenceStepCalls(t, c.cell, c.v, 12)
			at18 := recurrenceStepCalls(t, c.cell, c.v, 18)
			d1, d2 := at12.minus(at6), at18.minus(at12)
			if d1 != d2 {
				t.Fatalf("6 more timesteps cost %+v, then %+v: the work per timestep is not fixed", d1, d2)
			}
			if d1.hostCopies != 0 {
				t.Errorf("6 more timesteps made %d more copies between host and GPU", d1.hostCopies)
			}
			if d1.launches%6 != 0 || d1.products%6 != 0 {
				t.Fatalf("6 more timesteps cost %+v, not a multiple of 6", d1)
			}
			perLaunch, perProduct := d1.launches/6, d1.products/6
			t.Logf("per timestep: %d kernel launches and %d cuBLAS products (a training step of 6 timesteps: %+v)", perLaunch, perProduct, at6)
			if perLaunch > c.launches || perProduct > c.products {
				t.Errorf("per timestep: %d launches and %d products, want at most %d and %d", perLaunch, perProduct, c.launches, c.products)
			}
		})
	}
}
