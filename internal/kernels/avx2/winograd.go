package avx2

import "unsafe"

// The kernels of Winograd's F(2×2, 3×3) convolutions (package
// internal/kernels/conv, winograd.go): a Workspace is its
// conv.WinogradProducts on CPUs with AVX2 and FMA but not AVX-512. The
// transforms compute every value with the additions, in the same order,
// as package avx512's (winograd_amd64.s), 8 channels a register; the
// products are gemm6x16's tiles.

// WinogradRows is the multiple of rows WinogradProduct computes: a
// multiple of gemm6x16's six rows.
const WinogradRows = 48

// WinogradFits reports whether the Winograd kernels transform tiles of c
// channels and outputs of n: multiples of 16, gemm6x16's panels (the
// products never go through a partial panel).
func (ws *Workspace) WinogradFits(c, n int) bool {
	return haveKernels && c > 0 && n > 0 && c%gemmCols == 0 && n%gemmCols == 0
}

// WinogradKernel writes the transformed kernel u (16 planes of in rows of
// out: element (i, j) of G·g·Gᵀ in plane 4i+j) of the 3×3 kernel k (9
// taps of in rows of out, HWIO), for in and out that WinogradFits.
func (ws *Workspace) WinogradKernel(k []float32, in, out int, u []float32) {
	plane := in * out
	_ = k[9*plane-1]
	_ = u[16*plane-1]
	winogradKernel(&k[0], uintptr(plane*4), &u[0], plane/8)
}

// WinogradInput transforms count tiles of c channels: tile t's 4×4 pixels
// from src[2·c·t:] (rows ld values apart, pixels c apart), Bᵀ·d·B, value
// (i, j) of it written to dst[(4i+j)·plane + c·t:][:c].
func (ws *Workspace) WinogradInput(count int, src []float32, ld, c int, dst []float32, plane int) {
	if count <= 0 {
		return
	}
	_ = src[3*ld+(2*count+2)*c-1]
	_ = dst[15*plane+count*c-1]
	winogradInput(&src[0], uintptr(ld*4), uintptr(c*4), c/8, count, &dst[0], uintptr(plane*4))
}

// WinogradOutput transforms count tiles of n channels: tile t's 4×4
// values m[i][j] from src[(4i+j)·plane + n·t:][:n], Aᵀ·m·A, its 2×2
// outputs (i, j) written to dst[i·ld + n·(2t+j):][:n], each plus bias (n
// values; nil for none), then with relu the ReLU (the value where it is
// above 0, else +0), then with mask (nil for none; laid out as dst) +0
// wherever mask is not above 0.
func (ws *Workspace) WinogradOutput(count int, src []float32, plane, n int, dst []float32, ld int, bias []float32, relu bool, mask []float32) {
	if count <= 0 {
		return
	}
	_ = src[15*plane+count*n-1]
	last := ld + 2*count*n - 1
	_ = dst[last]
	var bp, mp *float32
	if bias != nil {
		_ = bias[n-1]
		bp = &bias[0]
	}
	if mask != nil {
		_ = mask[last]
		mp = &mask[0]
	}
	r := 0
	if relu {
		r = 1
	}
	winogradOutput(&src[0], uintptr(plane*4), n/8, count, &dst[0], uintptr(ld*4), bp, r, mp)
}

// WinogradProduct sets c (rows of n) to a·b for a rows×depth (rows depth
// apart) and b depth×n, on the calling goroutine, with rows rounded up
// to a multiple of WinogradRows (a and c must hold that many), for an n
// that WinogradFits: whole tiles of six rows and 16 columns, each group
// of six rows of a through every panel of b while it is in L1.
func (ws *Workspace) WinogradProduct(rows, depth, n int, a, b, c []float32) {
	if rows <= 0 {
		return
	}
	rows = (rows + WinogradRows - 1) / WinogradRows * WinogradRows
	_ = a[rows*depth-1]
	_ = b[depth*n-1]
	_ = c[rows*n-1]
	for q := 0; q < rows; q += gemmRows {
		// The first panel fetches the next six rows of a as it goes.
		here := uintptr(unsafe.Pointer(&a[q*depth]))
		pf, pfs := here, uintptr(0)
		if q+gemmRows < rows {
			pf, pfs = here+uintptr(gemmRows*depth*4), uintptr((gemmRows*depth*4+depth-1)/depth)
		}
		for col := 0; col < n; col += gemmCols {
			gemm6x16(depth, &a[q*depth], uintptr(depth*4), 4, &b[col], uintptr(n*4), &c[q*n+col], uintptr(n*4), pf, pfs, 1, 0)
			pf, pfs = here, 0
		}
	}
}

// WinogradOutputGrad transforms count tiles of n channels of an output's
// gradient, the adjoint of WinogradOutput's transform: tile t's 2×2
// values y from src[2·n·t:] (rows ld values apart, pixels n apart),
// A·y·Aᵀ, value (i, j) written to dst[(4i+j)·plane + n·t:][:n].
func (ws *Workspace) WinogradOutputGrad(count int, src []float32, ld, n int, dst []float32, plane int) {
	if count <= 0 {
		return
	}
	_ = src[ld+2*count*n-1]
	_ = dst[15*plane+count*n-1]
	winogradOutputGrad(&src[0], uintptr(ld*4), uintptr(n*4), n/8, count, &dst[0], uintptr(plane*4))
}

// WinogradKernelGrad writes the kernel's gradient dk (9 taps of in rows
// of out, HWIO) from parts sums of Winograd's form (part p's 16 planes of
// in rows of out from src[p·16·in·out:]): the parts added in order, then
// Gᵀ·x·G.
func (ws *Workspace) WinogradKernelGrad(src []float32, parts, in, out int, dk []float32) {
	plane := in * out
	_ = src[parts*16*plane-1]
	_ = dk[9*plane-1]
	winogradKernelGrad(&src[0], uintptr(plane*4), uintptr(16*plane*4), parts, &dk[0], plane/8)
}

// WinogradProductT sets c (m rows of n) to aᵀ·b, or adds it to c with
// add, for a rows×m and b rows×n, on the calling goroutine, for m and n
// that WinogradFits (n whole panels of 16 columns; m at least six rows,
// not necessarily a multiple of six). Each tile takes six columns of a
// down its rows against a panel of b; where six do not divide m, the last
// tile is moved back to end with c's rows, through a scratch tile of
// which only its own rows are copied into c.
func (ws *Workspace) WinogradProductT(rows, m, n int, a, b, c []float32, add bool) {
	if rows <= 0 {
		return
	}
	_ = a[rows*m-1]
	_ = b[rows*n-1]
	_ = c[m*n-1]
	beta := float32(0)
	if add {
		beta = 1
	}
	var t [gemmRows * gemmCols]float32
	for r := 0; r < m; r += gemmRows {
		r0, skip := r, 0
		if r+gemmRows > m {
			r0, skip = m-gemmRows, r+gemmRows-m
		}
		ap := &a[r0]
		for col := 0; col < n; col += gemmCols {
			// Each panel after the first finds a's columns in L1; the
			// first fetches them eight rows ahead.
			pf := uintptr(unsafe.Pointer(ap))
			if col == 0 {
				pf += uintptr(8 * m * 4)
			}
			if skip == 0 {
				gemm6x16(rows, ap, 4, uintptr(m*4), &b[col], uintptr(n*4), &c[r0*n+col], uintptr(n*4), pf, uintptr(m*4), 1, beta)
				continue
			}
			if add {
				for i := skip; i < gemmRows; i++ {
					copy(t[i*gemmCols:][:gemmCols], c[(r0+i)*n+col:][:gemmCols])
				}
			}
			gemm6x16(rows, ap, 4, uintptr(m*4), &b[col], uintptr(n*4), &t[0], gemmCols*4, pf, uintptr(m*4), 1, beta)
			for i := skip; i < gemmRows; i++ {
				copy(c[(r0+i)*n+col:][:gemmCols], t[i*gemmCols:][:gemmCols])
			}
		}
	}
}
