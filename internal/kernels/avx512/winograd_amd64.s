//go:build amd64 && !purego

#include "textflag.h"

// The transforms of Winograd's F(2×2, 3×3) convolution (package
// internal/kernels/conv, winograd.go), 16 channels a vector. A tile is
// the 4×4 pixels of the input that the 2×2 outputs of a 3×3 kernel read;
// the input's transform is Bᵀ·d·B and the output's Aᵀ·m·A, with
//
//	Bᵀ = | 1  0 -1  0 |    Aᵀ = | 1  1  1  0 |
//	     | 0  1  1  0 |         | 0  1 -1 -1 |
//	     | 0 -1  1  0 |
//	     | 0  1  0 -1 |
//
// each a sum or difference of two values (of three for Aᵀ), computed
// one by one in the order the rows below give, without fused operations.

// func winogradInput(src *float32, ld, cb uintptr, groups, count int, dst *float32, plane uintptr)
//
// For each of count tiles, the tile at src + 2·cb·t (its rows ld bytes
// apart, its pixels cb bytes apart, 16·groups channels each), writes
// (Bᵀ·d·B)[i][j] to dst + (4i+j)·plane + cb·t, channel by channel.
TEXT ·winogradInput(SB), NOSPLIT, $0-56
	MOVQ src+0(FP), SI
	MOVQ ld+8(FP), DX
	MOVQ cb+16(FP), BX
	MOVQ count+32(FP), R9
	MOVQ dst+40(FP), DI
	MOVQ plane+48(FP), R10
	LEAQ (R10)(R10*2), R12 // 3·plane
	LEAQ (BX)(BX*2), R8    // 3·cb

witile:
	TESTQ R9, R9
	JZ    widone
	MOVQ  SI, AX
	MOVQ  DI, R13
	MOVQ  groups+24(FP), CX

wigroup:
	LEAQ    (AX)(DX*1), R14
	LEAQ    (AX)(DX*2), R15
	LEAQ    (R14)(DX*2), R11
	VMOVUPS (AX), Z0
	VMOVUPS (AX)(BX*1), Z1
	VMOVUPS (AX)(BX*2), Z2
	VMOVUPS (AX)(R8*1), Z3
	VMOVUPS (R14), Z4
	VMOVUPS (R14)(BX*1), Z5
	VMOVUPS (R14)(BX*2), Z6
	VMOVUPS (R14)(R8*1), Z7
	VMOVUPS (R15), Z8
	VMOVUPS (R15)(BX*1), Z9
	VMOVUPS (R15)(BX*2), Z10
	VMOVUPS (R15)(R8*1), Z11
	VMOVUPS (R11), Z12
	VMOVUPS (R11)(BX*1), Z13
	VMOVUPS (R11)(BX*2), Z14
	VMOVUPS (R11)(R8*1), Z15

	// The next row of tiles reads two rows further down, whose lines no
	// tile has asked for yet: ask the caches for this tile's two columns
	// of them now.
	LEAQ       (R11)(BX*1), R14
	PREFETCHT0 (R11)(DX*1)
	PREFETCHT0 (R11)(DX*2)
	PREFETCHT0 (R14)(DX*1)
	PREFETCHT0 (R14)(DX*2)

	// t = Bᵀ·d, column by column: Z16+4i+j = t[i][j].
	VSUBPS Z8, Z0, Z16   // d0 - d2
	VSUBPS Z9, Z1, Z17
	VSUBPS Z10, Z2, Z18
	VSUBPS Z11, Z3, Z19
	VADDPS Z8, Z4, Z20   // d1 + d2
	VADDPS Z9, Z5, Z21
	VADDPS Z10, Z6, Z22
	VADDPS Z11, Z7, Z23
	VSUBPS Z4, Z8, Z24   // d2 - d1
	VSUBPS Z5, Z9, Z25
	VSUBPS Z6, Z10, Z26
	VSUBPS Z7, Z11, Z27
	VSUBPS Z12, Z4, Z28  // d1 - d3
	VSUBPS Z13, Z5, Z29
	VSUBPS Z14, Z6, Z30
	VSUBPS Z15, Z7, Z31

	// t·B, row by row, stored at 4i+j planes on.
	LEAQ (R13)(R10*4), R14
	LEAQ (R14)(R10*4), R15
	LEAQ (R15)(R10*4), R11

	VSUBPS  Z18, Z16, Z0 // t0 - t2
	VADDPS  Z18, Z17, Z1 // t1 + t2
	VSUBPS  Z17, Z18, Z2 // t2 - t1
	VSUBPS  Z19, Z17, Z3 // t1 - t3
	VMOVUPS Z0, (R13)
	VMOVUPS Z1, (R13)(R10*1)
	VMOVUPS Z2, (R13)(R10*2)
	VMOVUPS Z3, (R13)(R12*1)

	VSUBPS  Z22, Z20, Z4
	VADDPS  Z22, Z21, Z5
	VSUBPS  Z21, Z22, Z6
	VSUBPS  Z23, Z21, Z7
	VMOVUPS Z4, (R14)
	VMOVUPS Z5, (R14)(R10*1)
	VMOVUPS Z6, (R14)(R10*2)
	VMOVUPS Z7, (R14)(R12*1)

	VSUBPS  Z26, Z24, Z8
	VADDPS  Z26, Z25, Z9
	VSUBPS  Z25, Z26, Z10
	VSUBPS  Z27, Z25, Z11
	VMOVUPS Z8, (R15)
	VMOVUPS Z9, (R15)(R10*1)
	VMOVUPS Z10, (R15)(R10*2)
	VMOVUPS Z11, (R15)(R12*1)

	VSUBPS  Z30, Z28, Z12
	VADDPS  Z30, Z29, Z13
	VSUBPS  Z29, Z30, Z14
	VSUBPS  Z31, Z29, Z15
	VMOVUPS Z12, (R11)
	VMOVUPS Z13, (R11)(R10*1)
	VMOVUPS Z14, (R11)(R10*2)
	VMOVUPS Z15, (R11)(R12*1)

	ADDQ $64, AX
	ADDQ $64, R13
	DECQ CX
	JNZ  wigroup

	LEAQ (SI)(BX*2), SI
	ADDQ BX, DI
	DECQ R9
	JMP  witile

widone:
	VZEROUPPER
	RET

// func winogradOutput(src *float32, plane uintptr, groups, count int, dst *float32, ld uintptr, bias *float32, relu int, mask *float32)
//
// For each of count tiles, the tile of m at src + fb·t (fb = 64·groups
// bytes: 16·groups channels; m[i][j] at 4i+j planes on), writes the 2×2
// outputs (Aᵀ·m·A)[i][j] to dst + i·ld + fb·(2t+j), each plus bias (16·groups
// values; nil for none), then with relu ≠ 0 the larger of that and +0 (NaN
// to +0), then with mask (not nil: as many values as dst, laid out alike)
// +0 wherever mask is not above 0.
TEXT ·winogradOutput(SB), NOSPLIT, $0-72
	MOVQ   src+0(FP), SI
	MOVQ   plane+8(FP), R10
	MOVQ   count+24(FP), R9
	MOVQ   dst+32(FP), DI
	MOVQ   ld+40(FP), DX
	MOVQ   groups+16(FP), BX
	SHLQ   $6, BX            // fb
	LEAQ   (R10)(R10*2), R12 // 3·plane
	MOVQ   mask+64(FP), R11
	SUBQ   DI, R11           // mask - dst (used only where mask is not nil)
	VPXORD Z29, Z29, Z29

wotile:
	TESTQ R9, R9
	JZ    wodone
	MOVQ  SI, AX
	MOVQ  DI, R13
	MOVQ  bias+48(FP), R8
	MOVQ  groups+16(FP), CX

wogroup:
	LEAQ    (AX)(R10*4), R14
	LEAQ    (R14)(R10*4), R15
	VMOVUPS (AX), Z0
	VMOVUPS (AX)(R10*1), Z1
	VMOVUPS (AX)(R10*2), Z2
	VMOVUPS (AX)(R12*1), Z3
	VMOVUPS (R14), Z4
	VMOVUPS (R14)(R10*1), Z5
	VMOVUPS (R14)(R10*2), Z6
	VMOVUPS (R14)(R12*1), Z7
	LEAQ    (R15)(R10*4), R14
	VMOVUPS (R15), Z8
	VMOVUPS (R15)(R10*1), Z9
	VMOVUPS (R15)(R10*2), Z10
	VMOVUPS (R15)(R12*1), Z11
	VMOVUPS (R14), Z12
	VMOVUPS (R14)(R10*1), Z13
	VMOVUPS (R14)(R10*2), Z14
	VMOVUPS (R14)(R12*1), Z15

	// s = Aᵀ·m, column by column: s0 = (m0 + m1) + m2, s1 = (m1 - m2) - m3.
	VADDPS Z4, Z0, Z16
	VADDPS Z8, Z16, Z16
	VADDPS Z5, Z1, Z17
	VADDPS Z9, Z17, Z17
	VADDPS Z6, Z2, Z18
	VADDPS Z10, Z18, Z18
	VADDPS Z7, Z3, Z19
	VADDPS Z11, Z19, Z19
	VSUBPS Z8, Z4, Z20
	VSUBPS Z12, Z20, Z20
	VSUBPS Z9, Z5, Z21
	VSUBPS Z13, Z21, Z21
	VSUBPS Z10, Z6, Z22
	VSUBPS Z14, Z22, Z22
	VSUBPS Z11, Z7, Z23
	VSUBPS Z15, Z23, Z23

	// s·A, row by row: y0 = (s0 + s1) + s2, y1 = (s1 - s2) - s3.
	VADDPS Z17, Z16, Z0
	VADDPS Z18, Z0, Z0
	VSUBPS Z18, Z17, Z1
	VSUBPS Z19, Z1, Z1
	VADDPS Z21, Z20, Z2
	VADDPS Z22, Z2, Z2
	VSUBPS Z22, Z21, Z3
	VSUBPS Z23, Z3, Z3

	CMPQ    bias+48(FP), $0
	JEQ     wonobias
	VMOVUPS (R8), Z30
	VADDPS  Z30, Z0, Z0
	VADDPS  Z30, Z1, Z1
	VADDPS  Z30, Z2, Z2
	VADDPS  Z30, Z3, Z3

wonobias:
	CMPQ   relu+56(FP), $0
	JEQ    wonorelu
	VMAXPS Z29, Z0, Z0
	VMAXPS Z29, Z1, Z1
	VMAXPS Z29, Z2, Z2
	VMAXPS Z29, Z3, Z3

wonorelu:
	LEAQ (R13)(DX*1), R14
	CMPQ mask+64(FP), $0
	JEQ  wostore
	LEAQ (R13)(R11*1), R15 // the mask of dst's row 0
	VMOVUPS (R15), Z4
	VMOVUPS (R15)(BX*1), Z5
	VMOVUPS (R15)(DX*1), Z6
	ADDQ    DX, R15
	VMOVUPS (R15)(BX*1), Z7
	VCMPPS  $0x1e, Z29, Z4, K1 // mask > 0, false for NaN
	VCMPPS  $0x1e, Z29, Z5, K2
	VCMPPS  $0x1e, Z29, Z6, K3
	VCMPPS  $0x1e, Z29, Z7, K4
	VMOVAPS.Z Z0, K1, Z0
	VMOVAPS.Z Z1, K2, Z1
	VMOVAPS.Z Z2, K3, Z2
	VMOVAPS.Z Z3, K4, Z3

wostore:
	VMOVUPS Z0, (R13)
	VMOVUPS Z1, (R13)(BX*1)
	VMOVUPS Z2, (R14)
	VMOVUPS Z3, (R14)(BX*1)

	ADDQ $64, AX
	ADDQ $64, R13
	ADDQ $64, R8
	DECQ CX
	JNZ  wogroup

	ADDQ BX, SI
	LEAQ (DI)(BX*2), DI
	DECQ R9
	JMP  wotile

wodone:
	VZEROUPPER
	RET

// func winogradKernel(k *float32, plane uintptr, u *float32, groups int)
//
// For the 3×3 kernel k (tap t = 3·ky+kx at k + t·plane) writes G·g·Gᵀ,
// element (i, j) at u + (4i+j)·plane, 16·groups values each:
//
//	G·g, column by column: r0 = g0, r1 = ((g0 + g2) + g1)·½, r2 = ((g0 + g2) - g1)·½, r3 = g2
//	r·Gᵀ, row by row, the same.
TEXT ·winogradKernel(SB), NOSPLIT, $0-32
	MOVQ         k+0(FP), SI
	MOVQ         plane+8(FP), R10
	MOVQ         u+16(FP), DI
	MOVQ         groups+24(FP), CX
	LEAQ         (R10)(R10*2), R12 // 3·plane
	MOVL         $0x3f000000, AX   // 0.5
	VPBROADCASTD AX, Z31

wkgroup:
	LEAQ    (SI)(R12*1), R8 // taps 3-5
	LEAQ    (R8)(R12*1), R9 // taps 6-8
	VMOVUPS (SI), Z0
	VMOVUPS (SI)(R10*1), Z1
	VMOVUPS (SI)(R10*2), Z2
	VMOVUPS (R8), Z3
	VMOVUPS (R8)(R10*1), Z4
	VMOVUPS (R8)(R10*2), Z5
	VMOVUPS (R9), Z6
	VMOVUPS (R9)(R10*1), Z7
	VMOVUPS (R9)(R10*2), Z8

	// G·g: rows 1 and 2 into Z9-Z11 and Z12-Z14 (rows 0 and 3 are g's).
	VADDPS Z6, Z0, Z15
	VADDPS Z3, Z15, Z9
	VSUBPS Z3, Z15, Z12
	VADDPS Z7, Z1, Z15
	VADDPS Z4, Z15, Z10
	VSUBPS Z4, Z15, Z13
	VADDPS Z8, Z2, Z15
	VADDPS Z5, Z15, Z11
	VSUBPS Z5, Z15, Z14
	VMULPS Z31, Z9, Z9
	VMULPS Z31, Z10, Z10
	VMULPS Z31, Z11, Z11
	VMULPS Z31, Z12, Z12
	VMULPS Z31, Z13, Z13
	VMULPS Z31, Z14, Z14

	// r·Gᵀ for rows (Z0-Z2), (Z9-Z11), (Z12-Z14), (Z6-Z8).
	LEAQ (DI)(R10*4), R8
	LEAQ (R8)(R10*4), R9
	LEAQ (R9)(R10*4), R11

	VADDPS  Z2, Z0, Z15
	VADDPS  Z1, Z15, Z16
	VSUBPS  Z1, Z15, Z17
	VMULPS  Z31, Z16, Z16
	VMULPS  Z31, Z17, Z17
	VMOVUPS Z0, (DI)
	VMOVUPS Z16, (DI)(R10*1)
	VMOVUPS Z17, (DI)(R10*2)
	VMOVUPS Z2, (DI)(R12*1)

	VADDPS  Z11, Z9, Z15
	VADDPS  Z10, Z15, Z16
	VSUBPS  Z10, Z15, Z17
	VMULPS  Z31, Z16, Z16
	VMULPS  Z31, Z17, Z17
	VMOVUPS Z9, (R8)
	VMOVUPS Z16, (R8)(R10*1)
	VMOVUPS Z17, (R8)(R10*2)
	VMOVUPS Z11, (R8)(R12*1)

	VADDPS  Z14, Z12, Z15
	VADDPS  Z13, Z15, Z16
	VSUBPS  Z13, Z15, Z17
	VMULPS  Z31, Z16, Z16
	VMULPS  Z31, Z17, Z17
	VMOVUPS Z12, (R9)
	VMOVUPS Z16, (R9)(R10*1)
	VMOVUPS Z17, (R9)(R10*2)
	VMOVUPS Z14, (R9)(R12*1)

	VADDPS  Z8, Z6, Z15
	VADDPS  Z7, Z15, Z16
	VSUBPS  Z7, Z15, Z17
	VMULPS  Z31, Z16, Z16
	VMULPS  Z31, Z17, Z17
	VMOVUPS Z6, (R11)
	VMOVUPS Z16, (R11)(R10*1)
	VMOVUPS Z17, (R11)(R10*2)
	VMOVUPS Z8, (R11)(R12*1)

	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  wkgroup

	VZEROUPPER
	RET

// func winogradOutputGrad(src *float32, ld, cb uintptr, groups, count int, dst *float32, plane uintptr)
//
// The adjoint of winogradOutput's transform, for the kernel's gradient:
// for each of count tiles, the 2×2 output gradients y at src + 2·cb·t
// (rows ld bytes apart, pixels cb bytes apart, 16·groups channels each),
// writes (A·y·Aᵀ)[i][j] to dst + (4i+j)·plane + cb·t, with
//
//	A·y·Aᵀ = | e0      |   e0 = (y00, y00 + y01, y00 - y01, -y01)
//	         | e0 + e1 |   e1 = (y10, y10 + y11, y10 - y11, -y11)
//	         | e0 - e1 |
//	         | -e1     |
TEXT ·winogradOutputGrad(SB), NOSPLIT, $0-56
	MOVQ   src+0(FP), SI
	MOVQ   ld+8(FP), DX
	MOVQ   cb+16(FP), BX
	MOVQ   count+32(FP), R9
	MOVQ   dst+40(FP), DI
	MOVQ   plane+48(FP), R10
	LEAQ   (R10)(R10*2), R12 // 3·plane
	VPXORD Z31, Z31, Z31

wgtile:
	TESTQ R9, R9
	JZ    wgdone
	MOVQ  SI, AX
	MOVQ  DI, R13
	MOVQ  groups+24(FP), CX

wggroup:
	VMOVUPS (AX), Z0        // y00
	VMOVUPS (AX)(BX*1), Z1  // y01
	LEAQ    (AX)(DX*1), R14
	VMOVUPS (R14), Z2       // y10
	VMOVUPS (R14)(BX*1), Z3 // y11

	// The next row of tiles reads the two rows below: ask the caches for
	// this tile's columns of them now.
	PREFETCHT0 (R14)(DX*1)
	PREFETCHT0 (R14)(DX*2)
	LEAQ       (R14)(BX*1), R15
	PREFETCHT0 (R15)(DX*1)
	PREFETCHT0 (R15)(DX*2)

	// e0 in Z0, Z4, Z5, Z6; e1 in Z2, Z7, Z8, Z9.
	VADDPS Z1, Z0, Z4
	VSUBPS Z1, Z0, Z5
	VSUBPS Z1, Z31, Z6
	VADDPS Z3, Z2, Z7
	VSUBPS Z3, Z2, Z8
	VSUBPS Z3, Z31, Z9

	LEAQ (R13)(R10*4), R14
	LEAQ (R14)(R10*4), R15
	LEAQ (R15)(R10*4), R11

	VMOVUPS Z0, (R13)
	VMOVUPS Z4, (R13)(R10*1)
	VMOVUPS Z5, (R13)(R10*2)
	VMOVUPS Z6, (R13)(R12*1)

	VADDPS  Z2, Z0, Z10
	VADDPS  Z7, Z4, Z11
	VADDPS  Z8, Z5, Z12
	VADDPS  Z9, Z6, Z13
	VMOVUPS Z10, (R14)
	VMOVUPS Z11, (R14)(R10*1)
	VMOVUPS Z12, (R14)(R10*2)
	VMOVUPS Z13, (R14)(R12*1)

	VSUBPS  Z2, Z0, Z10
	VSUBPS  Z7, Z4, Z11
	VSUBPS  Z8, Z5, Z12
	VSUBPS  Z9, Z6, Z13
	VMOVUPS Z10, (R15)
	VMOVUPS Z11, (R15)(R10*1)
	VMOVUPS Z12, (R15)(R10*2)
	VMOVUPS Z13, (R15)(R12*1)

	VSUBPS  Z2, Z31, Z10
	VSUBPS  Z7, Z31, Z11
	VSUBPS  Z8, Z31, Z12
	VSUBPS  Z9, Z31, Z13
	VMOVUPS Z10, (R11)
	VMOVUPS Z11, (R11)(R10*1)
	VMOVUPS Z12, (R11)(R10*2)
	VMOVUPS Z13, (R11)(R12*1)

	ADDQ $64, AX
	ADDQ $64, R13
	DECQ CX
	JNZ  wggroup

	LEAQ (SI)(BX*2), SI
	ADDQ BX, DI
	DECQ R9
	JMP  wgtile

wgdone:
	VZEROUPPER
	RET

// func winogradKernelGrad(src *float32, plane, part uintptr, parts int, dk *float32, groups int)
//
// The kernel's gradient from the parts' sums in Winograd's form: x[i][j]
// the sum, in order, of the parts' values at src + p·part + (4i+j)·plane,
// writes (Gᵀ·x·G)[a][b] to dk + (3a+b)·plane, 16·groups values each, with
// Gᵀ·x, column by column (then ·G, row by row, the same):
//
//	h = (x1 + x2)·½, d = (x1 - x2)·½: rows x0 + h, d, h + x3.
TEXT ·winogradKernelGrad(SB), NOSPLIT, $0-48
	MOVQ         src+0(FP), SI
	MOVQ         plane+8(FP), R10
	MOVQ         part+16(FP), R11
	MOVQ         dk+32(FP), DI
	MOVQ         groups+40(FP), CX
	LEAQ         (R10)(R10*2), R12 // 3·plane
	MOVL         $0x3f000000, AX   // 0.5
	VPBROADCASTD AX, Z31

wkggroup:
	MOVQ    SI, AX
	LEAQ    (AX)(R10*4), R14
	LEAQ    (R14)(R10*4), R15
	LEAQ    (R15)(R10*4), R13
	VMOVUPS (AX), Z0
	VMOVUPS (AX)(R10*1), Z1
	VMOVUPS (AX)(R10*2), Z2
	VMOVUPS (AX)(R12*1), Z3
	VMOVUPS (R14), Z4
	VMOVUPS (R14)(R10*1), Z5
	VMOVUPS (R14)(R10*2), Z6
	VMOVUPS (R14)(R12*1), Z7
	VMOVUPS (R15), Z8
	VMOVUPS (R15)(R10*1), Z9
	VMOVUPS (R15)(R10*2), Z10
	VMOVUPS (R15)(R12*1), Z11
	VMOVUPS (R13), Z12
	VMOVUPS (R13)(R10*1), Z13
	VMOVUPS (R13)(R10*2), Z14
	VMOVUPS (R13)(R12*1), Z15
	MOVQ    parts+24(FP), R8

wkgpart:
	DECQ    R8
	JZ      wkgsummed
	ADDQ    R11, AX
	LEAQ    (AX)(R10*4), R14
	LEAQ    (R14)(R10*4), R15
	LEAQ    (R15)(R10*4), R13
	VADDPS  (AX), Z0, Z0
	VADDPS  (AX)(R10*1), Z1, Z1
	VADDPS  (AX)(R10*2), Z2, Z2
	VADDPS  (AX)(R12*1), Z3, Z3
	VADDPS  (R14), Z4, Z4
	VADDPS  (R14)(R10*1), Z5, Z5
	VADDPS  (R14)(R10*2), Z6, Z6
	VADDPS  (R14)(R12*1), Z7, Z7
	VADDPS  (R15), Z8, Z8
	VADDPS  (R15)(R10*1), Z9, Z9
	VADDPS  (R15)(R10*2), Z10, Z10
	VADDPS  (R15)(R12*1), Z11, Z11
	VADDPS  (R13), Z12, Z12
	VADDPS  (R13)(R10*1), Z13, Z13
	VADDPS  (R13)(R10*2), Z14, Z14
	VADDPS  (R13)(R12*1), Z15, Z15
	JMP     wkgpart

wkgsummed:
	// Gᵀ·x, column j: rows into Z16+j (a = 0), Z20+j (a = 1), Z24+j (a = 2).
	VADDPS Z8, Z4, Z28
	VMULPS Z31, Z28, Z28 // h
	VSUBPS Z8, Z4, Z20
	VMULPS Z31, Z20, Z20 // d
	VADDPS Z28, Z0, Z16
	VADDPS Z12, Z28, Z24
	VADDPS Z9, Z5, Z28
	VMULPS Z31, Z28, Z28
	VSUBPS Z9, Z5, Z21
	VMULPS Z31, Z21, Z21
	VADDPS Z28, Z1, Z17
	VADDPS Z13, Z28, Z25
	VADDPS Z10, Z6, Z28
	VMULPS Z31, Z28, Z28
	VSUBPS Z10, Z6, Z22
	VMULPS Z31, Z22, Z22
	VADDPS Z28, Z2, Z18
	VADDPS Z14, Z28, Z26
	VADDPS Z11, Z7, Z28
	VMULPS Z31, Z28, Z28
	VSUBPS Z11, Z7, Z23
	VMULPS Z31, Z23, Z23
	VADDPS Z28, Z3, Z19
	VADDPS Z15, Z28, Z27

	// ·G, row a from Z16+4a: into taps 3a, 3a+1, 3a+2.
	LEAQ (DI)(R12*1), R14 // taps 3-5
	LEAQ (R14)(R12*1), R15 // taps 6-8

	VADDPS  Z18, Z17, Z28
	VMULPS  Z31, Z28, Z28
	VSUBPS  Z18, Z17, Z29
	VMULPS  Z31, Z29, Z29
	VADDPS  Z28, Z16, Z30
	VMOVUPS Z30, (DI)
	VMOVUPS Z29, (DI)(R10*1)
	VADDPS  Z19, Z28, Z30
	VMOVUPS Z30, (DI)(R10*2)

	VADDPS  Z22, Z21, Z28
	VMULPS  Z31, Z28, Z28
	VSUBPS  Z22, Z21, Z29
	VMULPS  Z31, Z29, Z29
	VADDPS  Z28, Z20, Z30
	VMOVUPS Z30, (R14)
	VMOVUPS Z29, (R14)(R10*1)
	VADDPS  Z23, Z28, Z30
	VMOVUPS Z30, (R14)(R10*2)

	VADDPS  Z26, Z25, Z28
	VMULPS  Z31, Z28, Z28
	VSUBPS  Z26, Z25, Z29
	VMULPS  Z31, Z29, Z29
	VADDPS  Z28, Z24, Z30
	VMOVUPS Z30, (R15)
	VMOVUPS Z29, (R15)(R10*1)
	VADDPS  Z27, Z28, Z30
	VMOVUPS Z30, (R15)(R10*2)

	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  wkggroup

	VZEROUPPER
	RET
