package main

// The GPU driver: it registers "/GPU:N" when this example is built with -tags
// cudavm (see device/cuda and scripts/build-cuda.sh); without the tag the
// package is empty and it runs on the CPU only.
import _ "github.com/gokeras/gokeras/device/cuda"
