//go:build cudavm && cgo && kernelemu

package layers_test

import (
	"math"
	"testing"

	// The emulated GPU (device/cuda built with kernelemu) as /GPU:0.
	_ "github.com/gokeras/gokeras/device/cuda"
)

// TestAugmentationTrainsAsOnCPU: a CNN after RandomFlip and
// RandomTranslation trains on /GPU:0 to the losses it trains to on
// /CPU:0 (within 1e-5, the products' rounding): both devices draw the
// same flips and shifts. A control: without augmentation on one of them
// the losses part.
func TestAugmentationTrainsAsOnCPU(t *testing.T) {
	ds, _ := augmentImages(t, 64)
	cpu, gpu, plain := augmentCNN(true, "/CPU:0"), augmentCNN(true, "/GPU:0"), augmentCNN(false, "/GPU:0")
	defer cpu.Close()
	defer gpu.Close()
	defer plain.Close()
	lc, lg, lp := fitLosses(t, cpu, ds, 3), fitLosses(t, gpu, ds, 3), fitLosses(t, plain, ds, 3)
	near := func(a, b []float64) bool {
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-5*math.Max(1, math.Abs(a[i])) {
				return false
			}
		}
		return len(a) == len(b)
	}
	if !near(lc, lg) {
		t.Errorf("losses %v on /CPU:0, %v on /GPU:0", lc, lg)
	}
	if near(lc, lp) {
		t.Errorf("losses %v with augmentation on /CPU:0, %v without on /GPU:0: the control does not part", lc, lp)
	}
}

// TestRandomCropTrainsAsOnCPU: a CNN after RandomCrop and RandomContrast
// trains on /GPU:0 to the losses it trains to on /CPU:0 (within 1e-5):
// both devices draw the same windows and factors.
func TestRandomCropTrainsAsOnCPU(t *testing.T) {
	ds, _ := augmentImages(t, 64)
	cpu, gpu := cropCNN("/CPU:0"), cropCNN("/GPU:0")
	defer cpu.Close()
	defer gpu.Close()
	lc, lg := fitLosses(t, cpu, ds, 3), fitLosses(t, gpu, ds, 3)
	for i := range lc {
		if len(lc) != len(lg) || math.Abs(lc[i]-lg[i]) > 1e-5*math.Max(1, math.Abs(lc[i])) {
			t.Fatalf("losses %v on /CPU:0, %v on /GPU:0", lc, lg)
		}
	}
}
