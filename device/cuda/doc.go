// Package cuda is gokeras's GPU driver: built with -tags cudavm it
// registers a driver.Driver for "/GPU:N" that lists NVIDIA GPUs, allocates
// device memory for device.Place and device.Copy, and runs the same
// gorgonia graphs as the CPU backend, with kernels of its own and cuBLAS.
// Import it for its side effect, as database/sql drivers are imported:
//
//	import _ "github.com/gokeras/gokeras/device/cuda"
//
// Without the tag the package registers no driver and needs no CUDA and no
// cgo (it keeps only what its host tests need, such as where cuBLAS is
// looked for), so programs can import it unconditionally and gain the GPU
// when built with the tag.
//
// # Building
//
// The build tag is cudavm, not cuda: -tags cuda also switches
// gorgonia.org/gorgonia to its own CUDA backend, which needs cuDNN. The
// build needs cgo, cuda.h and a libcuda.so to link against;
// scripts/install-cuda.sh fetches both from Debian's nvidia-cuda-dev:
//
//	scripts/install-cuda.sh
//	scripts/build-cuda.sh            # go vet and go build -tags cudavm ./...
//	. .cuda/env.sh && go build -tags cudavm ./cmd/train
//
// The binary links libcuda.so.1 (the driver) and nothing else from CUDA.
// cuBLAS is opened at run time: $GOKERAS_CUBLAS (BLASEnv) alone when set,
// else the first of libcublas.so.13, .so.12 and .so.11 found on the
// loader's path, in /usr/local/cuda* or in python3's site-packages that
// loads and creates a handle (blaslookup.go). The kernels
// (kernels/kernels.cu, compiled by kernels/gen.sh through go generate and
// committed) are embedded as a fatbin with machine code for sm_80 and
// sm_90 and PTX for compute_75, which the driver JIT-compiles for other
// GPUs (Turing and later).
//
// gorgonia.org/cu calls cuInit in its init function and exits the process
// when it fails, so a cudavm binary does not start without a working
// driver and GPU; package internal/cuinit runs first and says why. In test
// binaries it hides the failed cuInit instead: the tests that need no GPU
// run and each that needs one skips, unless GOKERAS_REQUIRE_GPU is set.
//
// # The machine
//
// NewMachine compiles the graph with gokeras' one plan compiler
// (device/internal/plan, shared with the CPU backend): a cuBLAS sgemm for
// each product, a kernel for the rest, a bias and the activation after it
// in one kernel. An op it has no kernel for, or a float64 graph, is an
// error when the graph is bound, naming the node; nothing falls back to
// the CPU. The machine is a driver.Trainer: the forward pass, the backward
// pass and every update rule of package optim (with its clipping and
// weight decay) run on the GPU, plain SGD folded into the product that
// computes each weight's gradient (alpha -lr, beta 1, over at most
// plan.FoldRows rows), as on the CPU. The weights and the optimizer's slots
// live in device memory shared by a model's machines through its
// driver.State; per step the batch goes in and only the step's figures
// come back (the loss, the metrics' state). It is also a driver.Pipeliner: nn's Fit starts step k+1 while
// the GPU runs step k. An allocation that does not fit is an error
// wrapping ErrOutOfMemory with the bytes asked for and free.
//
// # The emulated GPU
//
// Built with -tags 'cudavm kernelemu' the package needs no CUDA at all:
// its GPUs are emulated on the host (api_emu.go), and the machine's own
// code runs against C memory, kernels.cu compiled for the host (package
// kernels/emu) and a column-major sgemm, strict where a GPU fails silently
// (NaN-filled memory, guard bytes, streams run only when waited for). CI
// runs the package's tests on it:
//
//	go test -tags 'cudavm kernelemu' ./device/cuda/...
//
// docs/devices.md in the repository covers the build, the cuBLAS search,
// scripts/gpu-verify.sh, the emulator and its race modes; nothing of this
// package has run on a real GPU yet.
package cuda

//go:generate ./kernels/gen.sh
