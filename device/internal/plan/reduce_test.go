package plan

import (
	"testing"

	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
)

// A data-parallel step's steps: the whole backward pass, one Reduce of
// every gradient, the global norm after it, then the updates, never folded
// into the products even where the backend offers that.
func TestReducedTrainingSteps(t *testing.T) {
	spec := modelSpec{hidden: ops.ReLU, out: ops.Sigmoid, loss: ops.SigmoidCrossEntropy, fromLogits: true, batch: 4}
	m := buildModel(t, spec, newValues(spec, 1), true)
	fuseAll := func(*Step, optim.Update) bool { return true }
	p, err := Compile(m.g, m.learnables(), Capabilities{FusedUpdate: fuseAll})
	if err != nil {
		t.Fatal(err)
	}
	sgd := optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1}
	plain, err := p.TrainingSteps(sgd)
	if err != nil {
		t.Fatal(err)
	}
	fused := 0
	for _, s := range plain {
		if s.Kind == GradUpdate {
			fused++
		}
	}
	if fused == 0 {
		t.Fatalf("the ordinary steps fold no update, so this test shows nothing:\n%v", plain)
	}
	for _, clip := range []float64{0, 1} {
		u := sgd
		u.GlobalClipNorm = clip
		steps, err := p.ReducedTrainingSteps(u)
		if err != nil {
			t.Fatal(err)
		}
		n := len(p.Steps)
		want := []Kind{Reduce}
		if clip > 0 {
			want = append(want, GlobalNorm)
		}
		for range p.Learnables {
			want = append(want, Update)
		}
		if len(steps) != n+len(want) {
			t.Fatalf("clip %v: %d steps, want %d:\n%v", clip, len(steps), n+len(want), steps)
		}
		for i, s := range steps[:n] {
			if s.Kind != p.Steps[i].Kind {
				t.Errorf("clip %v: step %d is %v, want the plan's %v", clip, i, s, p.Steps[i])
			}
		}
		for i, k := range want {
			if s := steps[n+i]; s.Kind != k {
				t.Errorf("clip %v: step %d is %v, want a %v", clip, n+i, s, k)
			}
		}
		if r := steps[n]; len(r.In) != len(p.Grads) || r.In[0] != p.Grads[0] || r.In[2] != p.Grads[2] {
			t.Errorf("clip %v: the Reduce step reads %v, want the gradients %v", clip, r.In, p.Grads)
		}
		for i, s := range steps[len(steps)-len(p.Learnables):] {
			if s.Learnable != i || s.In[1] != p.Grads[i] || (len(s.In) == 3) != (clip > 0) {
				t.Errorf("clip %v: update %d is %v", clip, i, s)
			}
		}
	}
}
