package optim

import "math"

// sqrt32 is the correctly rounded float32 square root, as CUDA's sqrtf.
func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// applyMore is apply's Go loops for the rules after Adam, and Adam with
// AMSGrad (see the Rule constants for their arithmetic). As in apply, each
// product is converted to float32 before it is added, so that no build
// fuses it into a multiply-add and the CUDA kernels can match each value.
func (u Update) applyMore(w, g []float32, slots [][]float32) {
	n := len(w)
	lr, eps := float32(u.LearningRate), float32(u.Epsilon)
	switch u.Rule {
	case RuleAdam: // with AMSGrad
		lrT := u.AdamRate()
		b1, c1, b2, c2 := u.Betas()
		m, s, sh := slots[0][:n], slots[1][:n], slots[2][:n]
		for i, gi := range g[:n] {
			m[i] = float32(b1*m[i]) + float32(c1*gi)
			s[i] = float32(b2*s[i]) + float32(float32(c2*gi)*gi)
			sh[i] = max(sh[i], s[i])
			w[i] -= float32(lrT*m[i]) / (sqrt32(sh[i]) + eps)
		}
	case RuleRMSprop:
		rho, c := u.RhoDecay()
		r := slots[0][:n]
		var mom, avg []float32
		k := 1
		if u.Momentum > 0 {
			mom, k = slots[k][:n], k+1
		}
		if u.Centered {
			avg = slots[k][:n]
		}
		momentum := float32(u.Momentum)
		for i, gi := range g[:n] {
			r[i] = float32(rho*r[i]) + float32(float32(c*gi)*gi)
			d := r[i]
			if avg != nil {
				avg[i] = float32(rho*avg[i]) + float32(c*gi)
				d -= float32(avg[i] * avg[i])
			}
			step := float32(lr*gi) / sqrt32(d+eps)
			if mom != nil {
				mom[i] = float32(momentum*mom[i]) + step
				w[i] -= mom[i]
			} else {
				w[i] -= step
			}
		}
	case RuleAdagrad:
		a := slots[0][:n]
		for i, gi := range g[:n] {
			a[i] += float32(gi * gi)
			w[i] -= float32(lr*gi) / sqrt32(a[i]+eps)
		}
	case RuleAdadelta:
		rho, c := u.RhoDecay()
		a, d := slots[0][:n], slots[1][:n]
		for i, gi := range g[:n] {
			a[i] = float32(rho*a[i]) + float32(float32(c*gi)*gi)
			delta := -float32(sqrt32(d[i]+eps)*gi) / sqrt32(a[i]+eps)
			d[i] = float32(rho*d[i]) + float32(float32(c*delta)*delta)
			w[i] += float32(lr * delta)
		}
	case RuleAdamax:
		_, c1, b2, _ := u.Betas()
		corr := u.AdamaxCorrection()
		m, v := slots[0][:n], slots[1][:n]
		for i, gi := range g[:n] {
			m[i] += float32((gi - m[i]) * c1)
			v[i] = max(float32(b2*v[i]), float32(math.Abs(float64(gi))))
			w[i] -= float32(lr*m[i]) / float32(corr*(v[i]+eps))
		}
	case RuleNadam:
		_, c1, _, c2 := u.Betas()
		mCoef, gCoef, vCorr := u.NadamCoefs()
		m, v := slots[0][:n], slots[1][:n]
		for i, gi := range g[:n] {
			m[i] += float32((gi - m[i]) * c1)
			v[i] += float32((float32(gi*gi) - v[i]) * c2)
			mh := float32(mCoef*m[i]) + float32(gCoef*gi)
			vh := v[i] / vCorr
			w[i] -= float32(lr*mh) / (sqrt32(vh) + eps)
		}
	}
}
