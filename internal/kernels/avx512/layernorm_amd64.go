//go:build amd64 && !purego

package avx512

import "golang.org/x/sys/cpu"

// lnAVX2 says whether the layer-normalization kernels run as AVX2 code
// (layerNormRowsAVX2): on CPUs with AVX2 but not AVX-512. The tests also
// set it on CPUs with both.
var lnAVX2 = !haveKernels && lnHaveAVX2

// lnHaveAVX2 reports whether this CPU runs layerNormRowsAVX2.
var lnHaveAVX2 = cpu.X86.HasAVX2

//go:noescape
func layerNormRows(a *lnArgs)

//go:noescape
func layerNormRowsAVX2(a *lnArgs)
