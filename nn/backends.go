package nn

// Every model can run on /CPU:0: the CPU backend registers itself with
// package device when linked in. The CUDA backend is linked by programs
// built with -tags cudavm that import device/cuda.
import _ "github.com/gokeras/gokeras/device/cpu"
