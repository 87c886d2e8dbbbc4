// Package nccl is gokeras' binding of NVIDIA's NCCL (libnccl.so.2), the
// engine for all-reducing gradients on the GPU, on the step's stream,
// with no host round trip. Like package mpi it loads the library at run
// time with purego: no cgo, no build tag, and a program that never calls
// Load never needs NCCL.
//
// Load looks where cuBLAS is looked for (internal/sys/nvlib): $GOKERAS_NCCL
// alone when it is set; else libnccl.so.2 on the loader's path, in a CUDA
// toolkit (/usr/local/cuda*), then in python3's site-packages
// (nvidia/nccl/lib, from pip's nvidia-nccl-cu12 or nvidia-nccl-cu13
// wheels, which torch installs). The first that loads and answers
// ncclGetVersion wins; a missing library is an error naming the wheel to
// install and the variable to set.
//
// The calls gokeras makes are typed Go methods: Version
// (ncclGetVersion), NewUniqueID (ncclGetUniqueId, on rank 0, to send to
// the others over MPI), InitRank (ncclCommInitRank), Comm's
// AllReduceSumFloat32 (ncclAllReduce with ncclFloat32 and ncclSum on a
// CUDA stream) and Destroy (ncclCommDestroy). A failed call's error names
// it and carries ncclGetErrorString's text. ncclCommInitRank takes the
// 128-byte ncclUniqueId by value, which purego.SyscallN cannot pass as
// such: the package lays it out as the C ABI does (on the stack after the
// register arguments on amd64, a pointer to a copy on arm64). A test
// calls a purego C-ABI callback with that layout; it has run on amd64
// only (arm64's layout is checked argument by argument).
//
// What has run, and what has not: the tests run on a host without a GPU or
// NCCL. They check the search order and its messages, every call's
// arguments (through a recorder in place of the library), the translation
// of error codes, and the ncclUniqueId layout; where a libnccl.so.2 is
// found they also load it and read its version, which needs no GPU. No
// GPU has run this package: no communicator has been made and no
// all-reduce enqueued. package distribute's MultiWorkerStrategy calls it
// for the CUDA machine's data-parallel steps (AllReduceSumDevice), and
// device/cuda's world-of-one test on a GPU checks it against the
// single-GPU run. Multi-GPU has not run here.
package nccl
