package optim

import "testing"

// BenchmarkApply times one update of the CIFAR-10 MLP's first kernel
// (3072·3000 weights) by each rule with vector kernels, AdamW being Adam
// with decoupled weight decay: the optimizer's share of a training step.
func BenchmarkApply(b *testing.B) {
	const n = 3072 * 3000
	for _, c := range []struct {
		name string
		u    Update
	}{
		{"sgd", Update{Rule: RuleSGD, LearningRate: 0.01, Iteration: 1}},
		{"adam", Update{Rule: RuleAdam, LearningRate: 0.001, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, Iteration: 3}},
		{"adamw", Update{Rule: RuleAdam, LearningRate: 0.001, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, Iteration: 3, WeightDecay: 0.004}},
		{"rmsprop", Update{Rule: RuleRMSprop, LearningRate: 0.001, Rho: 0.9, Epsilon: 1e-7, Iteration: 2}},
	} {
		w, g := make([]float32, n), make([]float32, n)
		for i := range g {
			g[i] = float32(i%31)/31 - 0.5
		}
		slots := make([][]float32, len(c.u.SlotNames()))
		for i := range slots {
			slots[i] = make([]float32, n)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(4 * n)
			for b.Loop() {
				c.u.Apply(w, g, slots)
			}
		})
	}
}
