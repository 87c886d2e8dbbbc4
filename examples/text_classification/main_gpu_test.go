//go:build cudavm && cgo && kernelemu

package main

import (
	"path/filepath"
	"testing"
)

// On the emulated /GPU:0 the example trains as on /CPU:0 and tells spam
// from ham as well.
func TestTrainsOnEmulatedGPU(t *testing.T) {
	corpus := filepath.Join(t.TempDir(), corpusPackage.File())
	writeTarball(t, corpus, fakeEmails(300, 7))
	_, cpu, _ := trainOn(t, corpus, "/CPU:0")
	_, gpu, majority := trainOn(t, corpus, "/GPU:0")
	t.Logf("test accuracy on /CPU:0 %.4f, on /GPU:0 %.4f, majority class %.4f", cpu, gpu, majority)
	if gpu < majority+0.15 {
		t.Errorf("test accuracy %.4f on /GPU:0, the majority class %.4f: want it well above", gpu, majority)
	}
	if d := gpu - cpu; d > 0.05 || d < -0.05 {
		t.Errorf("test accuracy %.4f on /GPU:0, %.4f on /CPU:0: want them within 0.05", gpu, cpu)
	}
}
