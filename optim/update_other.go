//go:build !amd64 || purego

package optim

const haveVector = false

// applyVector leaves every element to apply's Go loops.
func (u Update) applyVector(w, g []float32, slots [][]float32) int { return 0 }

// decayVector leaves every element to the Go loop.
func decayVector(w []float32, d float32) int { return 0 }

// adamDecayVector leaves every element to apply's Go loops.
func (u Update) adamDecayVector(w, g []float32, slots [][]float32, d float32) int { return 0 }
