//go:build cudavm && cgo

package cuda

import (
	"testing"

	"github.com/gokeras/gokeras/device/internal/plan"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
)

// TestFoldsUpdate: plain SGD, and only it, folds into a weight's gradient
// product and a bias's column sums, up to plan.FoldRows rows deep.
func TestFoldsUpdate(t *testing.T) {
	sgd := optim.Update{Rule: optim.RuleSGD, LearningRate: 0.01}
	weightGrad := func(k int) *plan.Step {
		return &plan.Step{Kind: plan.Gemm, Op: ops.Info{Kind: ops.OpMatMul, TransA: true}, M: 3072, N: 3000, K: k}
	}
	biasGrad := func(m int) *plan.Step { return &plan.Step{Kind: plan.SumRows, M: m, N: 3000} }
	with := func(f func(*optim.Update)) optim.Update { u := sgd; f(&u); return u }
	for _, c := range []struct {
		name string
		grad *plan.Step
		u    optim.Update
		want bool
	}{
		{"sgd, weight, batch 32", weightGrad(32), sgd, true},
		{"sgd, weight, FoldRows deep", weightGrad(plan.FoldRows), sgd, true},
		{"sgd, weight, deeper", weightGrad(plan.FoldRows + 1), sgd, false},
		{"sgd, bias, batch 32", biasGrad(32), sgd, true},
		{"sgd, bias, deeper", biasGrad(plan.FoldRows + 1), sgd, false},
		{"sgd, input gradient (not aᵀ·b)", &plan.Step{Kind: plan.Gemm, Op: ops.Info{Kind: ops.OpMatMul, TransB: true}, M: 32, N: 3072, K: 3000}, sgd, false},
		{"momentum", weightGrad(32), with(func(u *optim.Update) { u.Rule, u.Momentum = optim.RuleMomentum, 0.9 }), false},
		{"adam", weightGrad(32), with(func(u *optim.Update) { u.Rule = optim.RuleAdam }), false},
		{"sgd clipvalue", weightGrad(32), with(func(u *optim.Update) { u.ClipValue = 1 }), false},
		{"sgd weight decay", weightGrad(32), with(func(u *optim.Update) { u.WeightDecay = 0.01 }), false},
		{"sgd, another step", &plan.Step{Kind: plan.ActGrad, M: 32, N: 3000}, sgd, false},
	} {
		if got := foldsUpdate(c.grad, c.u); got != c.want {
			t.Errorf("%s: foldsUpdate %t, want %t", c.name, got, c.want)
		}
	}
}
