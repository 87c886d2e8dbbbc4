package avx512

import (
	"fmt"
	"unsafe"

	"github.com/gokeras/gokeras/internal/kernels/matrix"
)

// Convolutions without their patches. A convolution computed as a product
// writes every window of its input as a row of a patches matrix (im2col),
// KH·KW times the input, and its input's gradient is the product's result
// of the same size, scattered back onto the image (col2im): on ResNet-20's
// 32×32 stage both move more memory than the products compute.
//
// For a stride-1 convolution without dilation the windows need not be
// copied. Lay the images out on a grid: each image padded to Hp×Wp pixels
// (Hp = OH+KH-1, Wp = OW+KW-1), one after the other. The window whose top
// left corner is grid position q covers, in kernel row dy, the KW pixels
// from q+dy·Wp on: KW·C values in a row of the grid. So the product of the
// windows in one kernel row with that row of the kernel is a tall product
// whose rows of a are grid positions C values apart, read in place (rows
// overlap: lda = C, depth KW·C); the convolution is KH of them, each added
// into the result. The grid has a column per position, output or not: the
// KW-1 positions at the end of each grid row give values no one reads.
//
// The input's gradient is a convolution of the output's gradient, laid out
// on the same grid with zeros around it, with the kernel turned by 180° and
// each tap transposed: dx[p] = Σ dy[p-dy·Wp-dx]·w[dy][dx]ᵀ.

// ConvShape is a convolution with stride 1 and no dilation of Batch
// channels-last images of H×W×C: Filters filters of KH×KW, PadTop rows and
// PadLeft columns of zeros before the image, OH×OW outputs. The kernel is
// KH·KW·C rows of Filters (HWIO order); the output OH·OW·Filters values an
// image.
type ConvShape struct {
	Batch, H, W, C  int
	Filters         int
	KH, KW          int
	PadTop, PadLeft int
	OH, OW          int
}

// grid returns the padded image's height and width.
func (s ConvShape) grid() (hp, wp int) { return s.OH + s.KH - 1, s.OW + s.KW - 1 }

// check reports what is wrong with s, or nil.
func (s ConvShape) check() error {
	hp, wp := s.grid()
	switch {
	case s.Batch <= 0 || s.H <= 0 || s.W <= 0 || s.C <= 0 || s.Filters <= 0 || s.KH <= 0 || s.KW <= 0 || s.OH <= 0 || s.OW <= 0:
		return fmt.Errorf("avx512: convolution %+v: every size must be positive", s)
	case s.PadTop < 0 || s.PadLeft < 0 || s.PadTop+s.H > hp || s.PadLeft+s.W > wp:
		return fmt.Errorf("avx512: convolution %+v: the padded image (%d×%d) does not hold the image at its padding", s, hp, wp)
	}
	return nil
}

// ConvInputGradScratch is the number of float32s of scratch memory
// ConvInputGrad needs for s; zero when the kernels cannot compute it (not
// Available, or images too small for a tile).
func ConvInputGradScratch(s ConvShape) int {
	if !haveKernels || s.check() != nil {
		return 0
	}
	hp, wp := s.grid()
	if _, ok := tileFor(s.H*wp, s.C); !ok {
		return 0
	}
	margin := (s.KH-1)*wp + s.KW - 1
	return (margin+s.Batch*hp*wp)*s.Filters + s.Batch*hp*wp*s.C + s.KH*s.KW*s.Filters*s.C
}

// ConvInputGrad overwrites dx (the images' Batch·H·W·C values) with the
// gradient of the convolution s given the gradient dz of its output
// (Batch·OH·OW·Filters values) and its kernel, without patches; scratch
// holds ConvInputGradScratch(s) values, which it overwrites. It returns
// ErrUnsupported, computing nothing, where that is zero.
func (ws *Workspace) ConvInputGrad(s ConvShape, dz, kernel, dx, scratch []float32) error {
	need := ConvInputGradScratch(s)
	if need == 0 {
		if err := s.check(); err != nil {
			return err
		}
		return ErrUnsupported
	}
	hp, wp := s.grid()
	img := hp * wp
	co, c := s.Filters, s.C
	switch {
	case len(dz) < s.Batch*s.OH*s.OW*co, len(kernel) < s.KH*s.KW*c*co, len(dx) < s.Batch*s.H*s.W*c, len(scratch) < need:
		return fmt.Errorf("avx512: convolution input gradient %+v: got %d, %d, %d and %d values for the output gradient, kernel, input gradient and scratch", s, len(dz), len(kernel), len(dx), len(scratch))
	}
	margin := (s.KH-1)*wp + s.KW - 1
	grad := scratch[:(margin+s.Batch*img)*co]
	out := scratch[len(grad):][:s.Batch*img*c]
	turned := scratch[len(grad)+len(out):][:s.KH*s.KW*co*c]

	// The kernel turned by 180°, each tap transposed: Filters rows of C.
	taps := s.KH * s.KW
	for t := 0; t < taps; t++ {
		src, dst := kernel[t*c*co:][:c*co], turned[(taps-1-t)*co*c:][:co*c]
		for i := 0; i < c; i++ {
			for j, v := range src[i*co : (i+1)*co] {
				dst[j*c+i] = v
			}
		}
	}
	// The output's gradient on the grid, zeros around it.
	clear(grad[:margin*co])
	matrix.Parallel(ws.workers, s.Batch, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			g := grad[(margin+b*img)*co:][:img*co]
			rows := dz[b*s.OH*s.OW*co:]
			for y := 0; y < hp; y++ {
				row := g[y*wp*co:][:wp*co]
				if y >= s.OH {
					clear(row)
					continue
				}
				copy(row, rows[y*s.OW*co:][:s.OW*co])
				clear(row[s.OW*co:])
			}
		}
	})
	// The products, a group of r grid positions at a time: the image's
	// rows, every column of the grid.
	t, _ := tileFor(s.H*wp, c)
	span := s.H * wp
	groups := (span + t.r - 1) / t.r
	w := 16 * t.v
	depth := s.KW * co
	matrix.Parallel(ws.workers, s.Batch*groups, 4, func(_, lo, hi int) {
		for item := lo; item < hi; item++ {
			b, g := item/groups, item%groups
			q0, skip := g*t.r, 0
			if q0+t.r > span {
				q0, skip = span-t.r, q0+t.r-span
			}
			p := b*img + s.PadTop*wp + q0 // the group's first grid position
			for col := 0; col < c; col += w {
				for r := 0; r < s.KH; r++ {
					beta := float32(1)
					if r == 0 {
						beta = 0
					}
					a := &grad[(margin+p-(s.KH-1-r)*wp-(s.KW-1))*co]
					pf := uintptr(unsafe.Pointer(a))
					t.rows(depth, a, uintptr(co*4), &turned[r*depth*c+col], uintptr(c*4), &out[p*c+col], uintptr(c*4), skip, panelMasks(c-col), pf, 0, 1, beta)
				}
			}
		}
	})
	// Back from the grid to the images.
	matrix.Parallel(ws.workers, s.Batch, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			for y := 0; y < s.H; y++ {
				copy(dx[((b*s.H+y)*s.W)*c:][:s.W*c], out[(b*img+(y+s.PadTop)*wp+s.PadLeft)*c:][:s.W*c])
			}
		}
	})
	return nil
}
