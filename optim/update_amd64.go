//go:build amd64 && !purego

package optim

import "golang.org/x/sys/cpu"

// haveVector reports whether the AVX2 kernels of update_amd64.s run here.
var haveVector = cpu.X86.HasAVX2

//go:noescape
func sgdAVX2(w, grad *float32, n int, lr float32)

//go:noescape
func momentumAVX2(w, grad, vel *float32, n int, lr, mom float32, nesterov bool)

//go:noescape
func adamAVX2(w, grad, m, v *float32, n int, lrT, b1, c1, b2, c2, eps float32)

// applyVector runs the rule over the longest prefix of w that is a whole
// number of vectors and returns its length; apply's Go loops do the rest.
func (u Update) applyVector(w, g []float32, slots [][]float32) int {
	n := len(w) &^ 7
	if !haveVector || n == 0 {
		return 0
	}
	lr := float32(u.LearningRate)
	switch u.Rule {
	case RuleSGD:
		sgdAVX2(&w[0], &g[0], n, lr)
	case RuleMomentum, RuleNesterov:
		momentumAVX2(&w[0], &g[0], &slots[0][0], n, lr, float32(u.Momentum), u.Rule == RuleNesterov)
	case RuleAdam:
		b1, b2 := float32(u.Beta1), float32(u.Beta2)
		adamAVX2(&w[0], &g[0], &slots[0][0], &slots[1][0], n, u.AdamRate(), b1, 1-b1, b2, 1-b2, float32(u.Epsilon))
	default:
		return 0
	}
	return n
}
