//go:build amd64 && !purego

package avx512

//go:noescape
func layerNormRows(a *lnArgs)
