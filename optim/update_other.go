//go:build !amd64 || purego

package optim

const haveVector = false

// applyVector leaves every element to apply's Go loops.
func (u Update) applyVector(w, g []float32, slots [][]float32) int { return 0 }
