package avx512

// The kernels of Winograd's F(2×2, 3×3) convolutions (package
// internal/kernels/conv, winograd.go): a Workspace is its
// conv.WinogradProducts on CPUs with AVX-512.

// WinogradRows is the multiple of rows WinogradProduct computes: every
// conv kernel's tile has a number of rows that divides it.
const WinogradRows = 48

// WinogradFits reports whether the Winograd kernels transform tiles of c
// channels and outputs of n: multiples of 16.
func (ws *Workspace) WinogradFits(c, n int) bool {
	return haveKernels && c > 0 && n > 0 && c%16 == 0 && n%16 == 0
}

// WinogradKernel writes the transformed kernel u (16 planes of in rows of
// out: element (i, j) of G·g·Gᵀ in plane 4i+j) of the 3×3 kernel k (9
// taps of in rows of out, HWIO), for in and out that WinogradFits.
func (ws *Workspace) WinogradKernel(k []float32, in, out int, u []float32) {
	plane := in * out
	_ = k[9*plane-1]
	_ = u[16*plane-1]
	winogradKernel(&k[0], uintptr(plane*4), &u[0], plane/16)
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
	winogradInput(&src[0], uintptr(ld*4), uintptr(c*4), c/16, count, &dst[0], uintptr(plane*4))
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
	winogradOutput(&src[0], uintptr(plane*4), n/16, count, &dst[0], uintptr(ld*4), bp, r, mp)
}

// WinogradProduct sets c (rows of n) to a·b for a rows×depth (rows depth
// apart) and b depth×n, on the calling goroutine, with rows rounded up
// to a multiple of WinogradRows: a and c must hold that many.
func (ws *Workspace) WinogradProduct(rows, depth, n int, a, b, c []float32) {
	if rows <= 0 {
		return
	}
	rows = (rows + WinogradRows - 1) / WinogradRows * WinogradRows
	_ = a[rows*depth-1]
	_ = b[depth*n-1]
	_ = c[rows*n-1]
	t, _, _ := convTileFor(rows, n)
	w := 16 * t.v
	for q := 0; q < rows; q += t.r {
		for col := 0; col < n; col += w {
			t.conv(depth, &a[q*depth], uintptr(depth*4), &b[col], uintptr(n*4), &c[q*n+col], uintptr(n*4), 0, panelMasks(n-col),
				1, 0, 1, 0, nil, 0)
		}
	}
}
