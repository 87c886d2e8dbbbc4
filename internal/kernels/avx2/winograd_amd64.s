//go:build amd64 && !purego

#include "textflag.h"

// The transforms of Winograd's F(2×2, 3×3) convolution (package
// internal/kernels/conv, winograd.go), 8 channels a register. A tile is
// the 4×4 pixels of the input that the 2×2 outputs of a 3×3 kernel read;
// the input's transform is Bᵀ·d·B and the output's Aᵀ·m·A, with
//
//	Bᵀ = | 1  0 -1  0 |    Aᵀ = | 1  1  1  0 |
//	     | 0  1  1  0 |         | 0  1 -1 -1 |
//	     | 0 -1  1  0 |
//	     | 0  1  0 -1 |
//
// each a sum or difference of two values (of three for Aᵀ), without
// fused operations. Every value is computed with the operations, in the
// order, of package avx512's transforms (its winograd_amd64.s), so that
// the two give the same bits; with 16 YMM registers, not 32, the
// transforms go a row of a tile at a time, reading the values they need
// again from memory (the caches) where AVX-512's hold a whole tile.

DATA winohalf<>+0(SB)/4, $0x3f000000 // 0.5
GLOBL winohalf<>(SB), RODATA|NOPTR, $4

// One row of t·B from the row of t in Y8-Y11, stored at base + j·plane
// (R10 = plane, R12 = 3·plane): t0 - t2, t1 + t2, t2 - t1, t1 - t3.
#define INROW(base) \
	VSUBPS  Y10, Y8, Y12; \
	VADDPS  Y10, Y9, Y13; \
	VSUBPS  Y9, Y10, Y14; \
	VSUBPS  Y11, Y9, Y15; \
	VMOVUPS Y12, (base); \
	VMOVUPS Y13, (base)(R10*1); \
	VMOVUPS Y14, (base)(R10*2); \
	VMOVUPS Y15, (base)(R12*1)

// func winogradInput(src *float32, ld, cb uintptr, groups, count int, dst *float32, plane uintptr)
//
// For each of count tiles, the tile at src + 2·cb·t (its rows ld bytes
// apart, its pixels cb bytes apart, 8·groups channels each), writes
// (Bᵀ·d·B)[i][j] to dst + (4i+j)·plane + cb·t, channel by channel: row i
// of t = Bᵀ·d (d0 - d2, d1 + d2, d2 - d1, d1 - d3 for the rows dk of d),
// then t·B along it.
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
	LEAQ (AX)(DX*1), R14  // d1
	LEAQ (AX)(DX*2), R15  // d2
	LEAQ (R14)(DX*2), R11 // d3

	// t0 = d0 - d2, d2 kept in Y4-Y7.
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(BX*1), Y1
	VMOVUPS (AX)(BX*2), Y2
	VMOVUPS (AX)(R8*1), Y3
	VMOVUPS (R15), Y4
	VMOVUPS (R15)(BX*1), Y5
	VMOVUPS (R15)(BX*2), Y6
	VMOVUPS (R15)(R8*1), Y7
	VSUBPS  Y4, Y0, Y8
	VSUBPS  Y5, Y1, Y9
	VSUBPS  Y6, Y2, Y10
	VSUBPS  Y7, Y3, Y11
	INROW(R13)

	// t1 = d1 + d2, d1 kept in Y0-Y3.
	VMOVUPS (R14), Y0
	VMOVUPS (R14)(BX*1), Y1
	VMOVUPS (R14)(BX*2), Y2
	VMOVUPS (R14)(R8*1), Y3
	VADDPS  Y4, Y0, Y8
	VADDPS  Y5, Y1, Y9
	VADDPS  Y6, Y2, Y10
	VADDPS  Y7, Y3, Y11
	LEAQ    (R13)(R10*4), R14
	INROW(R14)

	// t2 = d2 - d1.
	VSUBPS Y0, Y4, Y8
	VSUBPS Y1, Y5, Y9
	VSUBPS Y2, Y6, Y10
	VSUBPS Y3, Y7, Y11
	LEAQ   (R14)(R10*4), R15
	INROW(R15)

	// t3 = d1 - d3.
	VSUBPS (R11), Y0, Y8
	VSUBPS (R11)(BX*1), Y1, Y9
	VSUBPS (R11)(BX*2), Y2, Y10
	VSUBPS (R11)(R8*1), Y3, Y11
	LEAQ   (R15)(R10*4), R11
	INROW(R11)

	// The next row of tiles reads two rows further down, whose lines no
	// tile has asked for yet: ask the caches for this tile's two columns
	// of them now.
	LEAQ       (AX)(DX*4), R14
	PREFETCHT0 (R14)
	PREFETCHT0 (R14)(BX*1)
	ADDQ       DX, R14
	PREFETCHT0 (R14)
	PREFETCHT0 (R14)(BX*1)

	ADDQ $32, AX
	ADDQ $32, R13
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
// For each of count tiles, the tile of m at src + fb·t (fb = 32·groups
// bytes: 8·groups channels; m[i][j] at 4i+j planes on), writes the 2×2
// outputs (Aᵀ·m·A)[i][j] to dst + i·ld + fb·(2t+j), each plus bias
// (8·groups values; nil for none), then with relu ≠ 0 the larger of that
// and +0 (NaN to +0), then with mask (not nil: as many values as dst,
// laid out alike) +0 wherever mask is not above 0. s = Aᵀ·m column by
// column (s0 = (m0 + m1) + m2, s1 = (m1 - m2) - m3 for the rows mk of m),
// then y0 = (s0 + s1) + s2, y1 = (s1 - s2) - s3 along each row of s.
TEXT ·winogradOutput(SB), NOSPLIT, $0-72
	MOVQ src+0(FP), SI
	MOVQ plane+8(FP), R10
	MOVQ count+24(FP), R9
	MOVQ dst+32(FP), DI
	MOVQ ld+40(FP), DX
	MOVQ groups+16(FP), BX
	SHLQ $5, BX            // fb
	LEAQ (R10)(R10*2), R12 // 3·plane
	MOVQ mask+64(FP), R11
	SUBQ DI, R11           // mask - dst (used only where mask is not nil)

wotile:
	TESTQ R9, R9
	JZ    wodone
	MOVQ  SI, AX
	MOVQ  DI, R13
	MOVQ  bias+48(FP), R8
	MOVQ  groups+16(FP), CX

wogroup:
	LEAQ    (AX)(R10*4), R14 // m1
	LEAQ    (R14)(R10*4), R15 // m2
	VMOVUPS (R14), Y0
	VMOVUPS (R14)(R10*1), Y1
	VMOVUPS (R14)(R10*2), Y2
	VMOVUPS (R14)(R12*1), Y3
	VMOVUPS (R15), Y4
	VMOVUPS (R15)(R10*1), Y5
	VMOVUPS (R15)(R10*2), Y6
	VMOVUPS (R15)(R12*1), Y7
	LEAQ    (R15)(R10*4), R14 // m3

	// s1 = (m1 - m2) - m3 into Y8-Y11.
	VSUBPS Y4, Y0, Y8
	VSUBPS (R14), Y8, Y8
	VSUBPS Y5, Y1, Y9
	VSUBPS (R14)(R10*1), Y9, Y9
	VSUBPS Y6, Y2, Y10
	VSUBPS (R14)(R10*2), Y10, Y10
	VSUBPS Y7, Y3, Y11
	VSUBPS (R14)(R12*1), Y11, Y11

	// s0 = (m0 + m1) + m2 into Y0-Y3.
	VADDPS (AX), Y0, Y0
	VADDPS Y4, Y0, Y0
	VADDPS (AX)(R10*1), Y1, Y1
	VADDPS Y5, Y1, Y1
	VADDPS (AX)(R10*2), Y2, Y2
	VADDPS Y6, Y2, Y2
	VADDPS (AX)(R12*1), Y3, Y3
	VADDPS Y7, Y3, Y3

	// The outputs y00, y01 (from s0) and y10, y11 (from s1) in Y12-Y15.
	VADDPS Y1, Y0, Y12
	VADDPS Y2, Y12, Y12
	VSUBPS Y2, Y1, Y13
	VSUBPS Y3, Y13, Y13
	VADDPS Y9, Y8, Y14
	VADDPS Y10, Y14, Y14
	VSUBPS Y10, Y9, Y15
	VSUBPS Y11, Y15, Y15

	CMPQ    bias+48(FP), $0
	JEQ     wonobias
	VMOVUPS (R8), Y4
	VADDPS  Y4, Y12, Y12
	VADDPS  Y4, Y13, Y13
	VADDPS  Y4, Y14, Y14
	VADDPS  Y4, Y15, Y15

wonobias:
	VXORPS Y5, Y5, Y5
	CMPQ   relu+56(FP), $0
	JEQ    wonorelu
	VMAXPS Y5, Y12, Y12
	VMAXPS Y5, Y13, Y13
	VMAXPS Y5, Y14, Y14
	VMAXPS Y5, Y15, Y15

wonorelu:
	LEAQ    (R13)(DX*1), R14
	CMPQ    mask+64(FP), $0
	JEQ     wostore
	LEAQ    (R13)(R11*1), R15 // the mask of dst's row 0
	VMOVUPS (R15), Y0
	VMOVUPS (R15)(BX*1), Y1
	VMOVUPS (R15)(DX*1), Y2
	ADDQ    DX, R15
	VMOVUPS (R15)(BX*1), Y3
	VCMPPS  $0x1e, Y5, Y0, Y0 // mask > 0, false for NaN
	VCMPPS  $0x1e, Y5, Y1, Y1
	VCMPPS  $0x1e, Y5, Y2, Y2
	VCMPPS  $0x1e, Y5, Y3, Y3
	VANDPS  Y0, Y12, Y12
	VANDPS  Y1, Y13, Y13
	VANDPS  Y2, Y14, Y14
	VANDPS  Y3, Y15, Y15

wostore:
	VMOVUPS Y12, (R13)
	VMOVUPS Y13, (R13)(BX*1)
	VMOVUPS Y14, (R14)
	VMOVUPS Y15, (R14)(BX*1)

	ADDQ $32, AX
	ADDQ $32, R13
	ADDQ $32, R8
	DECQ CX
	JNZ  wogroup

	ADDQ BX, SI
	LEAQ (DI)(BX*2), DI
	DECQ R9
	JMP  wotile

wodone:
	VZEROUPPER
	RET

// One row of r·Gᵀ from the row r0, r1, r2 of r = G·g, stored at
// base + j·plane (Y15 = ½): r0, ((r0 + r2) + r1)·½, ((r0 + r2) - r1)·½, r2.
#define KROW(r0, r1, r2, base) \
	VADDPS  r2, r0, Y12; \
	VADDPS  r1, Y12, Y13; \
	VSUBPS  r1, Y12, Y14; \
	VMULPS  Y15, Y13, Y13; \
	VMULPS  Y15, Y14, Y14; \
	VMOVUPS r0, (base); \
	VMOVUPS Y13, (base)(R10*1); \
	VMOVUPS Y14, (base)(R10*2); \
	VMOVUPS r2, (base)(R12*1)

// func winogradKernel(k *float32, plane uintptr, u *float32, groups int)
//
// For the 3×3 kernel k (tap t = 3·ky+kx at k + t·plane) writes G·g·Gᵀ,
// element (i, j) at u + (4i+j)·plane, 8·groups values each:
//
//	G·g, column by column: r0 = g0, r1 = ((g0 + g2) + g1)·½, r2 = ((g0 + g2) - g1)·½, r3 = g2
//	r·Gᵀ, row by row, the same.
TEXT ·winogradKernel(SB), NOSPLIT, $0-32
	MOVQ         k+0(FP), SI
	MOVQ         plane+8(FP), R10
	MOVQ         u+16(FP), DI
	MOVQ         groups+24(FP), CX
	LEAQ         (R10)(R10*2), R12 // 3·plane
	VBROADCASTSS winohalf<>(SB), Y15

wkgroup:
	LEAQ    (SI)(R12*1), R8 // taps 3-5
	LEAQ    (R8)(R12*1), R9 // taps 6-8
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R10*1), Y1
	VMOVUPS (SI)(R10*2), Y2
	VMOVUPS (R9), Y3
	VMOVUPS (R9)(R10*1), Y4
	VMOVUPS (R9)(R10*2), Y5

	// Rows 0 and 3 of r are g's rows 0 and 2.
	LEAQ (DI)(R10*4), R13
	LEAQ (R13)(R10*4), R14
	LEAQ (R14)(R10*4), R11
	KROW(Y0, Y1, Y2, DI)
	KROW(Y3, Y4, Y5, R11)

	// Rows 1 (Y6-Y8) and 2 (Y9-Y11) from g0 + g2 and g1.
	VADDPS Y3, Y0, Y0
	VADDPS Y4, Y1, Y1
	VADDPS Y5, Y2, Y2
	VADDPS (R8), Y0, Y6
	VSUBPS (R8), Y0, Y9
	VADDPS (R8)(R10*1), Y1, Y7
	VSUBPS (R8)(R10*1), Y1, Y10
	VADDPS (R8)(R10*2), Y2, Y8
	VSUBPS (R8)(R10*2), Y2, Y11
	VMULPS Y15, Y6, Y6
	VMULPS Y15, Y7, Y7
	VMULPS Y15, Y8, Y8
	VMULPS Y15, Y9, Y9
	VMULPS Y15, Y10, Y10
	VMULPS Y15, Y11, Y11
	KROW(Y6, Y7, Y8, R13)
	KROW(Y9, Y10, Y11, R14)

	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  wkgroup

	VZEROUPPER
	RET

// func winogradOutputGrad(src *float32, ld, cb uintptr, groups, count int, dst *float32, plane uintptr)
//
// The adjoint of winogradOutput's transform, for the kernel's gradient:
// for each of count tiles, the 2×2 output gradients y at src + 2·cb·t
// (rows ld bytes apart, pixels cb bytes apart, 8·groups channels each),
// writes (A·y·Aᵀ)[i][j] to dst + (4i+j)·plane + cb·t, with
//
//	A·y·Aᵀ = | e0      |   e0 = (y00, y00 + y01, y00 - y01, -y01)
//	         | e0 + e1 |   e1 = (y10, y10 + y11, y10 - y11, -y11)
//	         | e0 - e1 |
//	         | -e1     |
//
// each negation a subtraction from +0.
TEXT ·winogradOutputGrad(SB), NOSPLIT, $0-56
	MOVQ   src+0(FP), SI
	MOVQ   ld+8(FP), DX
	MOVQ   cb+16(FP), BX
	MOVQ   count+32(FP), R9
	MOVQ   dst+40(FP), DI
	MOVQ   plane+48(FP), R10
	LEAQ   (R10)(R10*2), R12 // 3·plane
	VXORPS Y15, Y15, Y15

wgtile:
	TESTQ R9, R9
	JZ    wgdone
	MOVQ  SI, AX
	MOVQ  DI, R13
	MOVQ  groups+24(FP), CX

wggroup:
	VMOVUPS (AX), Y0        // y00
	VMOVUPS (AX)(BX*1), Y1  // y01
	LEAQ    (AX)(DX*1), R14
	VMOVUPS (R14), Y2       // y10
	VMOVUPS (R14)(BX*1), Y3 // y11

	// The next row of tiles reads the two rows below: ask the caches for
	// this tile's columns of them now.
	PREFETCHT0 (R14)(DX*1)
	PREFETCHT0 (R14)(DX*2)
	LEAQ       (R14)(BX*1), R15
	PREFETCHT0 (R15)(DX*1)
	PREFETCHT0 (R15)(DX*2)

	// e0 in Y0, Y4, Y5, Y6; e1 in Y2, Y7, Y8, Y9.
	VADDPS Y1, Y0, Y4
	VSUBPS Y1, Y0, Y5
	VSUBPS Y1, Y15, Y6
	VADDPS Y3, Y2, Y7
	VSUBPS Y3, Y2, Y8
	VSUBPS Y3, Y15, Y9

	LEAQ (R13)(R10*4), R14
	LEAQ (R14)(R10*4), R15
	LEAQ (R15)(R10*4), R11

	VMOVUPS Y0, (R13)
	VMOVUPS Y4, (R13)(R10*1)
	VMOVUPS Y5, (R13)(R10*2)
	VMOVUPS Y6, (R13)(R12*1)

	VADDPS  Y2, Y0, Y10
	VADDPS  Y7, Y4, Y11
	VADDPS  Y8, Y5, Y12
	VADDPS  Y9, Y6, Y13
	VMOVUPS Y10, (R14)
	VMOVUPS Y11, (R14)(R10*1)
	VMOVUPS Y12, (R14)(R10*2)
	VMOVUPS Y13, (R14)(R12*1)

	VSUBPS  Y2, Y0, Y10
	VSUBPS  Y7, Y4, Y11
	VSUBPS  Y8, Y5, Y12
	VSUBPS  Y9, Y6, Y13
	VMOVUPS Y10, (R15)
	VMOVUPS Y11, (R15)(R10*1)
	VMOVUPS Y12, (R15)(R10*2)
	VMOVUPS Y13, (R15)(R12*1)

	VSUBPS  Y2, Y15, Y10
	VSUBPS  Y7, Y15, Y11
	VSUBPS  Y8, Y15, Y12
	VSUBPS  Y9, Y15, Y13
	VMOVUPS Y10, (R11)
	VMOVUPS Y11, (R11)(R10*1)
	VMOVUPS Y12, (R11)(R10*2)
	VMOVUPS Y13, (R11)(R12*1)

	ADDQ $32, AX
	ADDQ $32, R13
	DECQ CX
	JNZ  wggroup

	LEAQ (SI)(BX*2), SI
	ADDQ BX, DI
	DECQ R9
	JMP  wgtile

wgdone:
	VZEROUPPER
	RET

// One row of x·G from the row r0-r3 of Gᵀ·x, stored at taps base,
// base + plane and base + 2·plane (Y15 = ½): with h = (r1 + r2)·½ and
// d = (r1 - r2)·½, r0 + h, d, h + r3.
#define GROW(r0, r1, r2, r3, base) \
	VADDPS  r2, r1, Y12; \
	VMULPS  Y15, Y12, Y12; \
	VSUBPS  r2, r1, Y13; \
	VMULPS  Y15, Y13, Y13; \
	VADDPS  Y12, r0, Y14; \
	VMOVUPS Y14, (base); \
	VMOVUPS Y13, (base)(R10*1); \
	VADDPS  r3, Y12, Y14; \
	VMOVUPS Y14, (base)(R10*2)

// Loads row i of x's first part, from AX, into r0-r3.
#define XLOAD(r0, r1, r2, r3) \
	VMOVUPS (AX), r0; \
	VMOVUPS (AX)(R10*1), r1; \
	VMOVUPS (AX)(R10*2), r2; \
	VMOVUPS (AX)(R12*1), r3

// Adds row i of the next part, from AX, to r0-r3.
#define XADD(r0, r1, r2, r3) \
	VADDPS (AX), r0, r0; \
	VADDPS (AX)(R10*1), r1, r1; \
	VADDPS (AX)(R10*2), r2, r2; \
	VADDPS (AX)(R12*1), r3, r3

// func winogradKernelGrad(src *float32, plane, part uintptr, parts int, dk *float32, groups int)
//
// The kernel's gradient from the parts' sums in Winograd's form: x[i][j]
// the sum, in order, of the parts' values at src + p·part + (4i+j)·plane,
// writes (Gᵀ·x·G)[a][b] to dk + (3a+b)·plane, 8·groups values each, with
// Gᵀ·x, column by column (then ·G, row by row, the same):
//
//	h = (x1 + x2)·½, d = (x1 - x2)·½: rows x0 + h, d, h + x3.
//
// Rows 1 and 2 of x are summed first, giving h (kept) and d (row 1 of
// the result); then row 0 and row 3, each giving its row.
TEXT ·winogradKernelGrad(SB), NOSPLIT, $0-48
	MOVQ         src+0(FP), SI
	MOVQ         plane+8(FP), R10
	MOVQ         part+16(FP), R11
	MOVQ         dk+32(FP), DI
	MOVQ         groups+40(FP), CX
	LEAQ         (R10)(R10*2), R12 // 3·plane
	VBROADCASTSS winohalf<>(SB), Y15

wkggroup:
	// x1 into Y0-Y3, x2 into Y4-Y7, summed over the parts.
	LEAQ    (SI)(R10*4), AX
	LEAQ    (AX)(R10*4), BX
	XLOAD(Y0, Y1, Y2, Y3)
	VMOVUPS (BX), Y4
	VMOVUPS (BX)(R10*1), Y5
	VMOVUPS (BX)(R10*2), Y6
	VMOVUPS (BX)(R12*1), Y7
	MOVQ    parts+24(FP), R8

wkgmid:
	DECQ   R8
	JZ     wkgmidsummed
	ADDQ   R11, AX
	ADDQ   R11, BX
	XADD(Y0, Y1, Y2, Y3)
	VADDPS (BX), Y4, Y4
	VADDPS (BX)(R10*1), Y5, Y5
	VADDPS (BX)(R10*2), Y6, Y6
	VADDPS (BX)(R12*1), Y7, Y7
	JMP    wkgmid

wkgmidsummed:
	// h into Y8-Y11, d into Y0-Y3: row 1 of Gᵀ·x, into taps 3-5.
	VADDPS Y4, Y0, Y8
	VMULPS Y15, Y8, Y8
	VSUBPS Y4, Y0, Y0
	VMULPS Y15, Y0, Y0
	VADDPS Y5, Y1, Y9
	VMULPS Y15, Y9, Y9
	VSUBPS Y5, Y1, Y1
	VMULPS Y15, Y1, Y1
	VADDPS Y6, Y2, Y10
	VMULPS Y15, Y10, Y10
	VSUBPS Y6, Y2, Y2
	VMULPS Y15, Y2, Y2
	VADDPS Y7, Y3, Y11
	VMULPS Y15, Y11, Y11
	VSUBPS Y7, Y3, Y3
	VMULPS Y15, Y3, Y3
	LEAQ   (DI)(R12*1), R13
	GROW(Y0, Y1, Y2, Y3, R13)

	// Row 0: x0 + h, into taps 0-2.
	MOVQ SI, AX
	XLOAD(Y0, Y1, Y2, Y3)
	MOVQ parts+24(FP), R8

wkgfirst:
	DECQ R8
	JZ   wkgfirstsummed
	ADDQ R11, AX
	XADD(Y0, Y1, Y2, Y3)
	JMP  wkgfirst

wkgfirstsummed:
	VADDPS Y8, Y0, Y0
	VADDPS Y9, Y1, Y1
	VADDPS Y10, Y2, Y2
	VADDPS Y11, Y3, Y3
	GROW(Y0, Y1, Y2, Y3, DI)

	// Row 2: h + x3, into taps 6-8.
	LEAQ (SI)(R12*4), AX
	XLOAD(Y0, Y1, Y2, Y3)
	MOVQ parts+24(FP), R8

wkglast:
	DECQ R8
	JZ   wkglastsummed
	ADDQ R11, AX
	XADD(Y0, Y1, Y2, Y3)
	JMP  wkglast

wkglastsummed:
	VADDPS Y0, Y8, Y0
	VADDPS Y1, Y9, Y1
	VADDPS Y2, Y10, Y2
	VADDPS Y3, Y11, Y3
	LEAQ   (R13)(R12*1), R14
	GROW(Y0, Y1, Y2, Y3, R14)

	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  wkggroup

	VZEROUPPER
	RET
