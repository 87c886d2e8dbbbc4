//go:build ignore

// gengates fits tanhQ of gates.go: Q(s), s = x², with tanh(x) = x +
// x³·Q(x²) on [0, 0.625), by least squares of the relative error on
// Chebyshev points, reweighted towards the largest errors (Lawson), for
// degrees 3 to 6 and two cuts; it prints each fit's largest error when
// evaluated in float32 with fused multiply-adds, as the kernels do. The
// package uses the cut 0.625 and degree 5.
//
//	go run gengates.go
package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

func main() {
	for _, T := range []float64{0.55, 0.625} {
		for deg := 3; deg <= 6; deg++ {
			S := T * T
			const m = 4000
			A := mat.NewDense(m, deg+1, nil)
			b := mat.NewVecDense(m, nil)
			w := make([]float64, m)
			for i := range w {
				w[i] = 1
			}
			var c []float64
			for iter := 0; iter < 30; iter++ {
				for i := 0; i < m; i++ {
					s := S * (1 - math.Cos(math.Pi*(float64(i)+0.5)/m)) / 2
					a := math.Sqrt(s)
					f := (math.Tanh(a)/a - 1) / s
					ww := w[i] * s
					for j := 0; j <= deg; j++ {
						A.Set(i, j, ww*math.Pow(s, float64(j)))
					}
					b.SetVec(i, ww*f)
				}
				var x mat.VecDense
				if err := x.SolveVec(A, b); err != nil {
					panic(err)
				}
				c = x.RawVector().Data
				// Lawson reweighting
				sum := 0.0
				for i := 0; i < m; i++ {
					s := S * (1 - math.Cos(math.Pi*(float64(i)+0.5)/m)) / 2
					a := math.Sqrt(s)
					f := (math.Tanh(a)/a - 1) / s
					q := 0.0
					for j := deg; j >= 0; j-- {
						q = q*s + c[j]
					}
					w[i] *= math.Abs(s*(q-f)) + 1e-30
					sum += w[i]
				}
				for i := range w {
					w[i] /= sum / m
				}
			}
			// evaluate in float32 with fma
			maxu := 0.0
			for a32 := float32(1e-4); a32 < float32(T); a32 = math.Nextafter32(a32, 1) {
				a := a32
				s := a * a
				q := float32(c[deg])
				for j := deg - 1; j >= 0; j-- {
					q = float32(math.FMA(float64(q), float64(s), float64(float32(c[j]))))
				}
				y := float32(math.FMA(float64(a*s), float64(q), float64(a)))
				want := math.Tanh(float64(a))
				ulp := float64(math.Nextafter32(float32(want), 2) - float32(want))
				u := math.Abs(float64(y)-want) / ulp
				if u > maxu {
					maxu = u
				}
			}
			fmt.Printf("T=%g deg=%d max ulp %.3f coeffs", T, deg, maxu)
			for _, v := range c {
				fmt.Printf(" %.9e", float32(v))
			}
			fmt.Println()
		}
	}
}
