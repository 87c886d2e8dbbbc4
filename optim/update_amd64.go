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

//go:noescape
func decayAVX2(w *float32, n int, d float32)

//go:noescape
func adamDecayAVX2(w, grad, m, v *float32, n int, lrT, b1, c1, b2, c2, eps, d float32)

// adamDecayVector applies decoupled weight decay w -= w·d and then Adam
// (not AMSGrad) in one pass, to the longest prefix of w that is a whole
// number of vectors, and returns its length: AdamW without a second pass
// over the weights, with the bits of decay then apply.
func (u Update) adamDecayVector(w, g []float32, slots [][]float32, d float32) int {
	n := len(w) &^ 7
	if !haveVector || n == 0 || u.Rule != RuleAdam || u.AMSGrad {
		return 0
	}
	b1, c1, b2, c2 := u.Betas()
	adamDecayAVX2(&w[0], &g[0], &slots[0][0], &slots[1][0], n, u.AdamRate(), b1, c1, b2, c2, float32(u.Epsilon), d)
	return n
}

// decayVector applies decoupled weight decay w -= w·d to the longest
// prefix of w that is a whole number of vectors and returns its length.
func decayVector(w []float32, d float32) int {
	n := len(w) &^ 7
	if !haveVector || n == 0 {
		return 0
	}
	decayAVX2(&w[0], n, d)
	return n
}

//go:noescape
func rmspropAVX2(w, grad, r *float32, n int, lr, rho, c, eps float32)

//go:noescape
func adagradAVX2(w, grad, a *float32, n int, lr, eps float32)

//go:noescape
func adadeltaAVX2(w, grad, a, d *float32, n int, lr, rho, c, eps float32)

//go:noescape
func adamaxAVX2(w, grad, m, u *float32, n int, lr, c1, b2, corr, eps float32)

//go:noescape
func nadamAVX2(w, grad, m, v *float32, n int, lr, c1, c2, mCoef, gCoef, vCorr, eps float32)

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
		if u.AMSGrad {
			return 0
		}
		b1, c1, b2, c2 := u.Betas()
		adamAVX2(&w[0], &g[0], &slots[0][0], &slots[1][0], n, u.AdamRate(), b1, c1, b2, c2, float32(u.Epsilon))
	case RuleRMSprop:
		if u.Momentum > 0 || u.Centered {
			return 0
		}
		rho, c := u.RhoDecay()
		rmspropAVX2(&w[0], &g[0], &slots[0][0], n, lr, rho, c, float32(u.Epsilon))
	case RuleAdagrad:
		adagradAVX2(&w[0], &g[0], &slots[0][0], n, lr, float32(u.Epsilon))
	case RuleAdadelta:
		rho, c := u.RhoDecay()
		adadeltaAVX2(&w[0], &g[0], &slots[0][0], &slots[1][0], n, lr, rho, c, float32(u.Epsilon))
	case RuleAdamax:
		_, c1, b2, _ := u.Betas()
		adamaxAVX2(&w[0], &g[0], &slots[0][0], &slots[1][0], n, lr, c1, b2, u.AdamaxCorrection(), float32(u.Epsilon))
	case RuleNadam:
		mCoef, gCoef, vCorr := u.NadamCoefs()
		_, c1, _, c2 := u.Betas()
		nadamAVX2(&w[0], &g[0], &slots[0][0], &slots[1][0], n, lr, c1, c2, mCoef, gCoef, vCorr, float32(u.Epsilon))
	default:
		return 0
	}
	return n
}
