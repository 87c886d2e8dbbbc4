package blas_test

import (
	"fmt"

	"github.com/gokeras/gokeras/blas"
)

// Multiply two row-major matrices the fastest way this machine has.
func ExampleMultiplier_Sgemm() {
	a := []float32{1, 2, 3, 4, 5, 6} // 2×3
	b := []float32{1, 0, 0, 1, 1, 1} // 3×2
	c := make([]float32, 4)          // 2×2
	if err := blas.Default().Sgemm(false, false, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c)
	// Output: [4 5 10 11]
}

// Programs say at start how they multiply: the AVX-512 kernels, a native
// BLAS or gonum's pure-Go one (GOKERAS_BLAS changes the choice).
func ExampleDefault() {
	fmt.Println("BLAS:", blas.Default())
}

// One BLAS on its own, without the AVX-512 kernels: here gonum's, the same
// on every machine.
func ExampleLibrary_Sgemm() {
	a := []float32{1, 2, 3, 4} // 2×2
	c := make([]float32, 4)
	// c = aᵀ·a
	if err := blas.PureGo().Sgemm(true, false, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c)
	// Output: [10 14 14 20]
}

// A plain SGD step folded into the gradient product: w -= lr·xᵀ·dz, with
// no buffer for the gradient.
func ExampleLibrary_Sgemm_sgdUpdate() {
	x := []float32{1, 2, 3, 4}       // batch of 2 samples, 2 features
	dz := []float32{1, -1, 0.5, 0.5} // 2×2 gradient of the layer's output
	w := []float32{1, 1, 1, 1}       // 2×2 weights
	const lr = 0.5
	if err := blas.PureGo().Sgemm(true, false, 2, 2, 2, -lr, x, 2, dz, 2, 1, w, 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w)
	// Output: [-0.25 0.75 -1 1]
}
