package main

import (
	"math"

	"github.com/gokeras/gokeras/datasets/cifar10"
)

// maxSyntheticSamples bounds --synthetic-samples: 100 million images with
// their test set, 369 GB, more than any machine this runs on holds, and
// far from overflowing an int.
const maxSyntheticSamples = 100_000_000

// syntheticBytes is the memory the --synthetic dataset of n training
// samples takes: n images and labels, and a fifth as many for the test set.
func syntheticBytes(n int) float64 {
	return float64(n+max(n/5, 1)) * (cifar10.ImageSize + 1)
}

// memoryBytes is this machine's memory, or +Inf where it cannot be read.
func memoryBytes() float64 {
	if b := physicalMemory(); b > 0 {
		return float64(b)
	}
	return math.Inf(1)
}
