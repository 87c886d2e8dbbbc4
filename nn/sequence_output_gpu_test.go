//go:build cudavm && cgo && kernelemu

package nn_test

import _ "github.com/gokeras/gokeras/device/cuda"

// In the emulated GPU's build, the sequence tests run on /GPU:0: the loss
// of an output of several steps reuses the loss kernels on a view of one
// row per step, which must hold there too.
func init() { seqDevice = "/GPU:0" }
