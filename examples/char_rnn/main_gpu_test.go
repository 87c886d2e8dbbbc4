//go:build cudavm && cgo && kernelemu

package main

import (
	"math"
	"path/filepath"
	"testing"
)

// On the emulated /GPU:0 the example trains as on /CPU:0, with and
// without --all-steps: the same held-out loss per character (within
// float32 rounding of the products' other order), well below the
// characters' frequencies.
func TestTrainsOnEmulatedGPU(t *testing.T) {
	corpus := filepath.Join(t.TempDir(), corpusPackage.File())
	writeTarball(t, corpus, fakeBook(8, 5))
	for _, more := range [][]string{nil, {"--all-steps"}} {
		_, cpu, _ := trainOn(t, corpus, "/CPU:0", more...)
		_, gpu, unigram := trainOn(t, corpus, "/GPU:0", more...)
		t.Logf("%v: held-out loss per character on /CPU:0 %.4f, on /GPU:0 %.4f, frequencies alone %.4f", more, cpu, gpu, unigram)
		if gpu > 0.75*unigram {
			t.Errorf("%v: held-out loss %.4f on /GPU:0, frequencies alone %.4f: want the model well below", more, gpu, unigram)
		}
		if math.Abs(gpu-cpu) > 0.01*cpu {
			t.Errorf("%v: held-out loss %.4f on /GPU:0, %.4f on /CPU:0: want them within 1%%", more, gpu, cpu)
		}
	}
}
