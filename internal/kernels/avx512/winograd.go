package avx512

import "unsafe"

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
// to a multiple of WinogradRows: a and c must hold that many. Depths of
// 16 and 32 go to the winoRows kernels, deeper ones to the conv kernels'
// tiles: the same sums in the same order either way.
func (ws *Workspace) WinogradProduct(rows, depth, n int, a, b, c []float32) {
	if rows <= 0 {
		return
	}
	rows = (rows + WinogradRows - 1) / WinogradRows * WinogradRows
	_ = a[rows*depth-1]
	_ = b[depth*n-1]
	_ = c[rows*n-1]
	switch depth {
	case 16:
		winoRows16(rows/winoRowsTile, n/16, &a[0], &b[0], &c[0], uintptr(n*4))
	case 32:
		winoRows32(rows/winoRowsTile, n/16, &a[0], &b[0], &c[0], uintptr(n*4))
	default:
		winogradProductTiles(rows, depth, n, a, b, c)
	}
}

// winogradProductTiles is WinogradProduct on the conv kernels' tiles, for
// rows a multiple of WinogradRows.
func winogradProductTiles(rows, depth, n int, a, b, c []float32) {
	t, _, _ := convTileFor(rows, n)
	w := 16 * t.v
	for q := 0; q < rows; q += t.r {
		for col := 0; col < n; col += w {
			t.conv(depth, &a[q*depth], uintptr(depth*4), &b[col], uintptr(n*4), &c[q*n+col], uintptr(n*4), 0, panelMasks(n-col),
				1, 0, 1, 0, nil, 0)
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
	winogradOutputGrad(&src[0], uintptr(ld*4), uintptr(n*4), n/16, count, &dst[0], uintptr(plane*4))
}

// WinogradKernelGrad writes the kernel's gradient dk (9 taps of in rows
// of out, HWIO) from parts sums of Winograd's form (part p's 16 planes of
// in rows of out from src[p·16·in·out:]): the parts added in order, then
// Gᵀ·x·G.
func (ws *Workspace) WinogradKernelGrad(src []float32, parts, in, out int, dk []float32) {
	plane := in * out
	_ = src[parts*16*plane-1]
	_ = dk[9*plane-1]
	winogradKernelGrad(&src[0], uintptr(plane*4), uintptr(16*plane*4), parts, &dk[0], plane/16)
}

// winogradColTiles are the tiles of WinogradProductT: the cols kernels'.
var winogradColTiles = [...]struct {
	r, v int
	cols tallKernel
}{
	{24, 1, cols24x16}, {12, 2, cols12x32}, {8, 3, cols8x48}, {6, 4, cols6x64},
	{16, 1, cols16x16}, {8, 2, cols8x32}, {4, 4, cols4x64},
}

// WinogradProductT sets c (m rows of n) to aᵀ·b, or adds it to c with
// add, for a rows×m and b rows×n, on the calling goroutine, for an m that
// is a multiple of 16 (WinogradFits). Up to 32 rows of c go to the
// winoCols kernels, more to the cols kernels: the same sums in the same
// order either way.
func (ws *Workspace) WinogradProductT(rows, m, n int, a, b, c []float32, add bool) {
	if rows <= 0 {
		return
	}
	_ = a[rows*m-1]
	_ = b[rows*n-1]
	_ = c[m*n-1]
	if m > 32 {
		winogradProductTTiles(rows, m, n, a, b, c, add)
		return
	}
	k, r, w := winoCols16x16, 16, 16
	if n%32 == 0 {
		k, r, w = winoCols8x32, 8, 32
	}
	flag := 0
	if add {
		flag = 1
	}
	for i := 0; i < m; i += r {
		for j := 0; j < n; j += w {
			k(rows, &a[i], uintptr(m*4), &b[j], uintptr(n*4), &c[i*n+j], uintptr(n*4), flag)
		}
	}
}

// winogradProductTTiles is WinogradProductT on the cols kernels' tiles.
func winogradProductTTiles(rows, m, n int, a, b, c []float32, add bool) {
	// The tile whose rows divide m that computes the fewest values, of
	// those the widest (the fewest loads a multiply-add).
	best, bestCost := -1, 0
	for i, t := range winogradColTiles {
		if m%t.r != 0 {
			continue
		}
		w := 16 * t.v
		cost := m * ((n + w - 1) / w * w)
		if best < 0 || cost < bestCost || cost == bestCost && t.v > winogradColTiles[best].v {
			best, bestCost = i, cost
		}
	}
	t := winogradColTiles[best]
	w := 16 * t.v
	beta := float32(0)
	if add {
		beta = 1
	}
	for r := 0; r < m; r += t.r {
		for col := 0; col < n; col += w {
			t.cols(rows, &a[r], uintptr(m*4), &b[col], uintptr(n*4), &c[r*n+col], uintptr(n*4), 0, panelMasks(n-col),
				uintptr(unsafe.Pointer(&a[r])), 0, 1, beta)
		}
	}
}
