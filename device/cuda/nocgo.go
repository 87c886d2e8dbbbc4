//go:build cudavm && !cgo

package cuda

// The CUDA machine calls the CUDA driver through cgo. This line stops a
// build with -tags cudavm but CGO_ENABLED=0 with an error that names the fix.
var _ = cudavm_needs_cgo__set_CGO_ENABLED_1_and_see_scripts_install_cuda_sh
