// Package cuda is gokeras's GPU driver: built with -tags cudavm it
// registers a driver.Driver for "/GPU:N" that lists NVIDIA GPUs, allocates
// device memory for device.Place and device.Copy, and runs the same
// gorgonia graphs as the CPU machine, with kernels of its own and cuBLAS.
// Import it for its side effect, as database/sql drivers are imported:
//
//	import _ "github.com/gokeras/gokeras/device/cuda"
//
// Without the tag the package is empty (this file only), so importing it
// costs nothing and needs no CUDA: programs can import it unconditionally
// and gain the GPU when built with the tag.
//
// # Building
//
// The build tag is cudavm, not cuda: -tags cuda also switches
// gorgonia.org/gorgonia to its own CUDA backend, which needs cudnn.h and
// links cuDNN and cuBLAS. The build needs cgo, cuda.h and a libcuda.so to
// link against; scripts/install-cuda.sh fetches both from Debian's
// nvidia-cuda-dev into .cuda/ and writes the cgo flags to .cuda/env.sh:
//
//	scripts/install-cuda.sh
//	scripts/build-cuda.sh            # go vet and go build -tags cudavm ./...
//	. .cuda/env.sh && go build -tags cudavm ./cmd/train
//
// The binary links libcuda.so.1 (the driver) and nothing else from CUDA.
// cuBLAS is opened at run time with dlopen: $GOKERAS_CUBLAS (BLASEnv) alone
// when set, else libcublas.so.13, .so.12 and .so.11 on the loader's path,
// in /usr/local/cuda*, then in python3's site-packages (pip's nvidia-cublas),
// the first that loads and creates a handle (blaslookup.go; the scripts'
// scripts/lib/cublas.sh searches the same way): gorgonia.org/cu/blas
// would link libcublas.so.11 with versioned symbols, and a binary built
// against CUDA 11.8 would then not start where only CUDA 12 or 13 is
// installed. The kernels (kernels/kernels.cu, compiled by kernels/gen.sh
// through go generate and committed) are embedded in the binary twice: a
// fatbin with machine code for sm_80 and sm_90 (A100, H100: no JIT at
// start) and PTX for compute_75, which it also carries; the machine loads
// the fatbin, and the plain PTX if the driver refuses it. The driver
// JIT-compiles the PTX for other GPUs, Turing and later, with a driver for
// CUDA 11.8 or newer. compute_75 is the oldest target CUDA 12 and 13 both
// compile for.
//
// # Starting without a GPU
//
// gorgonia.org/cu v0.9.6 calls cuInit in its init function and, if that
// fails, prints a line and calls os.Exit(1): a cudavm binary does not start
// on a machine without a working NVIDIA driver and GPU, and only cudavm
// code may import cu. Package internal/cuinit runs first and says why,
// naming the CUDA error. In test binaries it hides the failed cuInit
// instead, so that the driver reports no device: the tests that need no
// GPU run, each that needs one skips (t.Skip, after one "SKIP" line with
// the reason), unless GOKERAS_REQUIRE_GPU is set. Without libcuda.so.1 at
// all the dynamic loader refuses to start the binary. Build without the
// tag for CPU-only machines.
//
// # The machine
//
// NewMachine compiles the graph with gokeras' one plan compiler
// (device/internal/plan, shared with the CPU backend): it walks the graph
// in execution order and maps each op of package ops (ops.Inspect) to a step,
// a cuBLAS sgemm for the products of Affine and its gradients, a kernel
// for the rest; a bias and the elementwise activation after it are one
// kernel. An op it has no kernel for, or a float64 graph, is an error when
// the graph is bound, naming the node and its op; nothing falls back to
// the CPU. The losses, every ops.LossKind with its label smoothing, Huber's
// delta and sample weights, are computed in double with ops' formulas; a
// loss kind or parameter the kernels do not know is refused at bind too
// (launch.ForLoss). Each machine has its own buffers, stream and cuBLAS
// handle; the GPU's primary context and the loaded kernels are shared.
//
// The machine is a driver.Trainer. Train runs the forward pass, the
// backward pass and the update (every rule of package optim, with its
// clipping by value, by norm or by global norm and its weight decay, from
// the optim.Update it is given, each weight and slot optim.Update.Apply's
// to the bit, but that clipping by norm sums the gradient's squares in
// another order; the global norm's factor, summed over every gradient in
// a fixed order, stays in device memory for the updates) on the GPU. Plain
// SGD is folded into the cuBLAS product that computes each weight's
// gradient (alpha -lr, beta 1, the weights as its output, over at most
// plan.FoldRows rows), as on the CPU, so its gradients never exist. The
// weights and the optimizer's slots live in device memory shared by all the machines of a
// model through its driver.State, so per step the batch and its labels go
// in, and the loss and the outputs come back; the weights and slots stay on
// the GPU for the whole fit. nn calls State.Sync before it reads weights or
// slots on the host (GetWeights, SaveWeights, SaveCheckpoint, the
// optimizer's State) and drops the model's machines after it writes them
// (SetWeights, LoadWeights, LoadCheckpoint), so the next machine starts
// from the host values. RunAll, which nn uses for evaluation and
// prediction, reads the device copy of a weight when a training machine
// left it ahead, and otherwise copies the weight in from the host; it
// copies the gradients out, as gorgonia's machines expose them
// (node.Grad()).
//
// The machine is also a driver.Pipeliner, and nn's Fit uses it so: the
// host starts step k+1 (gathers its batch, queues its copies and
// kernels) while the GPU runs step k, and reads step k's loss and
// metrics after that. The host side of a step (its pinned staging, the
// copies of its loss and metrics, its error words) lives in one of two
// frames, taken in turn, and the batch goes to one of two sets of input
// buffers, copied on a stream of its own that the step's kernels wait for
// by an event, so the copy of one batch overlaps the work on the one
// before. Each frame ends with an event that the host waits for, not the
// whole stream. A step that must copy from Go memory (an input over 256
// MiB, or weights the host changed) is waited for before the host goes on.
//
// A GPU allocation that does not fit is an error wrapping ErrOutOfMemory
// that gives the bytes asked for and the bytes free.
//
// # The emulated GPU
//
// Built with -tags 'cudavm kernelemu' the package needs no CUDA at all: its
// GPUs are emulated on the host (api_emu.go), and the machine's own code
// (launches, copies, staging, streams, cuBLAS arguments) runs against C
// memory, kernels.cu compiled for the host (package kernels/emu) and a
// column-major sgemm. It is strict where a GPU fails silently: memory
// starts as NaNs, copies and products must stay inside one allocation,
// guard bytes after each allocation are checked at every wait, streams run
// when waited for (and waiting for an event runs only the work before it),
// launches need the kernel's count of arguments, and a kernel gets exactly
// the dynamic shared memory its launch asks for, poisoned, its two names
// for it one block of memory as on a GPU. The
// package's tests run on it in CI:
//
//	go test -tags 'cudavm kernelemu' ./device/cuda/...
package cuda

//go:generate ./kernels/gen.sh
