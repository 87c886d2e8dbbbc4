//go:build amd64 && !purego

#include "textflag.h"

// The kernels keep a tile of the result in twelve of the 16 YMM registers
// (Y0-Y11) and stream the operands past it.

#define ZERO12 \
	VXORPS Y0, Y0, Y0; VXORPS Y1, Y1, Y1; VXORPS Y2, Y2, Y2; VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; VXORPS Y5, Y5, Y5; VXORPS Y6, Y6, Y6; VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; VXORPS Y9, Y9, Y9; VXORPS Y10, Y10, Y10; VXORPS Y11, Y11, Y11

// One row of panel4x24's result: three accumulators times a value of a.
#define FMA3(off, r0, r1, r2) \
	VBROADCASTSS off(SI), Y15; \
	VFMADD231PS Y15, Y12, r0; \
	VFMADD231PS Y15, Y13, r1; \
	VFMADD231PS Y15, Y14, r2

// Row of the epilogue with beta ≠ 0: c = alpha·acc + beta·c.
#define ROWAB(r0, r1, r2) \
	VMULPS Y12, r0, r0; \
	VMULPS Y12, r1, r1; \
	VMULPS Y12, r2, r2; \
	VMOVUPS (DI), Y14; \
	VFMADD231PS Y14, Y13, r0; \
	VMOVUPS 32(DI), Y14; \
	VFMADD231PS Y14, Y13, r1; \
	VMOVUPS 64(DI), Y14; \
	VFMADD231PS Y14, Y13, r2; \
	VMOVUPS r0, (DI); \
	VMOVUPS r1, 32(DI); \
	VMOVUPS r2, 64(DI); \
	ADDQ R9, DI

// Row of the epilogue with beta = 0: c = alpha·acc.
#define ROWA(r0, r1, r2) \
	VMULPS Y12, r0, r0; \
	VMULPS Y12, r1, r1; \
	VMULPS Y12, r2, r2; \
	VMOVUPS r0, (DI); \
	VMOVUPS r1, 32(DI); \
	VMOVUPS r2, 64(DI); \
	ADDQ R9, DI

// One step of panel4x24: a row of b times the four values of a.
#define STEP4x24 \
	VMOVUPS (BX), Y12; \
	VMOVUPS 32(BX), Y13; \
	VMOVUPS 64(BX), Y14; \
	FMA3(0, Y0, Y1, Y2); \
	FMA3(4, Y3, Y4, Y5); \
	FMA3(8, Y6, Y7, Y8); \
	FMA3(12, Y9, Y10, Y11); \
	ADDQ R8, SI; \
	ADDQ DX, BX

// func panel4x24(kc int, a *float32, lda uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, pf, pfb *float32, alpha, beta float32)
//
// c[r][j] = alpha·Σ_{p<kc} a[p·lda + r]·b[p·ldb + j] + beta·c[r][j]
// for r < 4, j < 24; lda, ldb and ldc are in bytes, and every value named
// is readable (and c writable): callers pass scratch tiles at the edges.
// beta = 0 does not read c. pf is the next tile of c (4 rows of 96 bytes,
// stride ldc), which the kernel asks the caches to fetch. pfb, unless nil,
// is the next tile of b, the 96 bytes after each of its kc rows (stride
// ldb), fetched too: the rows of a weight matrix are too far apart, and
// too many, for the hardware prefetchers.
TEXT ·panel4x24(SB), NOSPLIT, $0-80
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), BX
	MOVQ ldb+32(FP), DX
	MOVQ c+40(FP), DI
	MOVQ ldc+48(FP), R9

	// Fetch the next tile of c: three touches cover each 96-byte row.
	MOVQ pf+56(FP), R12
	MOVQ $4, R13

pfloop:
	PREFETCHT0 (R12)
	PREFETCHT0 48(R12)
	PREFETCHT0 92(R12)
	ADDQ       R9, R12
	DECQ       R13
	JNZ        pfloop

	ZERO12

	TESTQ CX, CX
	JZ    epilogue
	MOVQ  pfb+64(FP), R10
	TESTQ R10, R10
	JNZ   loopfetch

loop:
	STEP4x24
	DECQ CX
	JNZ  loop
	JMP  epilogue

	// The same, fetching the next tile of b: two touches 64 bytes apart
	// per row, which over consecutive tiles reach every line of it.
loopfetch:
	PREFETCHT0 (R10)
	PREFETCHT0 64(R10)
	ADDQ       DX, R10
	STEP4x24
	DECQ       CX
	JNZ        loopfetch

epilogue:
	VBROADCASTSS alpha+72(FP), Y12
	VBROADCASTSS beta+76(FP), Y13
	MOVL         beta+76(FP), AX
	TESTL        $0x7fffffff, AX
	JZ           alphaonly

	ROWAB(Y0, Y1, Y2)
	ROWAB(Y3, Y4, Y5)
	ROWAB(Y6, Y7, Y8)
	ROWAB(Y9, Y10, Y11)
	VZEROUPPER
	RET

alphaonly:
	ROWA(Y0, Y1, Y2)
	ROWA(Y3, Y4, Y5)
	ROWA(Y6, Y7, Y8)
	ROWA(Y9, Y10, Y11)
	VZEROUPPER
	RET

// One weight row of dot6x16: its value at addr times the 16 batch values.
#define DOT2(addr, r0, r1) \
	VBROADCASTSS addr, Y14; \
	VFMADD231PS  Y14, Y12, r0; \
	VFMADD231PS  Y14, Y13, r1

// func dot6x16(n int, w *float32, ldw uintptr, bt *float32, tile *float32)
//
// tile[r][i] = Σ_{p<n} w[r·ldw + p]·bt[p·16 + i] for r < 6, i < 16: six
// rows of w (stride ldw bytes, all readable) against bt, packed 16 wide.
TEXT ·dot6x16(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ ldw+16(FP), R8
	MOVQ bt+24(FP), BX
	MOVQ tile+32(FP), DI

	LEAQ (R8)(R8*2), R9  // 3·ldw
	LEAQ (SI)(R9*1), R10 // rows 3-5

	ZERO12

	TESTQ CX, CX
	JZ    store

dotloop:
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	DOT2((SI), Y0, Y1)
	DOT2((SI)(R8*1), Y2, Y3)
	DOT2((SI)(R8*2), Y4, Y5)
	DOT2((R10), Y6, Y7)
	DOT2((R10)(R8*1), Y8, Y9)
	DOT2((R10)(R8*2), Y10, Y11)
	ADDQ $64, BX
	ADDQ $4, SI
	ADDQ $4, R10
	DECQ CX
	JNZ  dotloop

store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VMOVUPS Y8, 256(DI)
	VMOVUPS Y9, 288(DI)
	VMOVUPS Y10, 320(DI)
	VMOVUPS Y11, 352(DI)
	VZEROUPPER
	RET

// func maskPositive(x, v, out *float32, n int)
// out = v where x > 0, else +0; n is a multiple of 8.
TEXT ·maskPositive(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ v+8(FP), DX
	MOVQ out+16(FP), DI
	MOVQ n+24(FP), CX
	VXORPS Y15, Y15, Y15
	XORQ AX, AX
maskloop:
	CMPQ AX, CX
	JGE maskdone
	VMOVUPS (SI)(AX*4), Y0
	VCMPPS $0x1e, Y15, Y0, Y1 // x > 0, false for NaN
	VANDPS (DX)(AX*4), Y1, Y2
	VMOVUPS Y2, (DI)(AX*4)
	ADDQ $8, AX
	JMP maskloop
maskdone:
	VZEROUPPER
	RET

// func add(dst, a, b *float32, n int)
//
// dst[i] = a[i] + b[i] for i < n, a multiple of 8.
TEXT ·add(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX
add3loop:
	CMPQ AX, CX
	JGE add3done
	VMOVUPS (SI)(AX*4), Y0
	VADDPS (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP add3loop
add3done:
	VZEROUPPER
	RET

// func maxInto(dst, src *float32, n int)
//
// dst[i] = src[i] where src[i] > dst[i], for i < n, a multiple of 8:
// VMAXPS's second operand (dst) wins ties, zeros of either sign and NaNs.
TEXT ·maxInto(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
maxloop:
	CMPQ AX, CX
	JGE maxdone
	VMOVUPS (SI)(AX*4), Y1
	VMAXPS (DI)(AX*4), Y1, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP maxloop
maxdone:
	VZEROUPPER
	RET

// func maxPoolBack(dimg, img, y, grad *float32, offs *int, noffs, c int)
//
// For each channel j < c (a multiple of 8): dimg[off+j] += grad[j] at the
// first off of offs[:noffs] where img[off+j] == y[j]. Y3 holds the
// channels still looking for their maximum; a blend keeps dimg where a
// channel does not take the gradient (no add of zero, which could turn
// -0 into +0).
TEXT ·maxPoolBack(SB), NOSPLIT, $0-56
	MOVQ dimg+0(FP), DI
	MOVQ img+8(FP), SI
	MOVQ y+16(FP), R8
	MOVQ grad+24(FP), R9
	MOVQ offs+32(FP), R10
	MOVQ noffs+40(FP), R11
	MOVQ c+48(FP), CX
	XORQ AX, AX
	VPCMPEQD Y15, Y15, Y15
mpbgroup:
	CMPQ AX, CX
	JGE mpbdone
	VMOVUPS (R8)(AX*4), Y1
	VMOVUPS (R9)(AX*4), Y2
	VMOVAPS Y15, Y3
	XORQ BX, BX
mpbpos:
	CMPQ BX, R11
	JGE mpbnext
	MOVQ (R10)(BX*8), DX
	ADDQ AX, DX
	VCMPPS $0, (SI)(DX*4), Y1, Y4 // img == y, false for NaN
	VANDPS Y3, Y4, Y4             // and still looking
	VANDNPS Y3, Y4, Y3            // found: no longer looking
	VMOVUPS (DI)(DX*4), Y5
	VADDPS Y2, Y5, Y6
	VBLENDVPS Y4, Y6, Y5, Y5      // dimg + g where found, else dimg
	VMOVUPS Y5, (DI)(DX*4)
	INCQ BX
	JMP mpbpos
mpbnext:
	ADDQ $8, AX
	JMP mpbgroup
mpbdone:
	VZEROUPPER
	RET

// One row of gemm6x16's epilogue with beta ≠ 0: c = alpha·acc + beta·c.
#define ROW2AB(r0, r1) \
	VMULPS      Y12, r0, r0; \
	VMULPS      Y12, r1, r1; \
	VMOVUPS     (DI), Y14; \
	VFMADD231PS Y14, Y13, r0; \
	VMOVUPS     32(DI), Y14; \
	VFMADD231PS Y14, Y13, r1; \
	VMOVUPS     r0, (DI); \
	VMOVUPS     r1, 32(DI); \
	ADDQ        R9, DI

// One row of gemm6x16's epilogue with beta = 0: c = alpha·acc.
#define ROW2A(r0, r1) \
	VMULPS  Y12, r0, r0; \
	VMULPS  Y12, r1, r1; \
	VMOVUPS r0, (DI); \
	VMOVUPS r1, 32(DI); \
	ADDQ    R9, DI

// func gemm6x16(kc int, a *float32, ars, aps uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, pf, pfs uintptr, alpha, beta float32)
//
// c[r][j] = alpha·Σ_{p<kc} a[r·ars + p·aps]·b[p·ldb + j] + beta·c[r][j]
// for r < 6, j < 16, every stride in bytes: a six-row tile of c from six
// rows of a, read in place whichever way a is laid out (ars = its row
// stride and aps = 4 for a·b, the reverse for aᵀ·b), against 16 columns of
// b. Every value named must be readable, and c writable; beta = 0 does
// not read c. Step p also asks the caches for the line at pf + p·pfs,
// which may be anything (a prefetch never faults): the operand the next
// call will read, which the hardware prefetchers would find too late.
TEXT ·gemm6x16(SB), NOSPLIT, $0-88
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ ars+16(FP), R8
	MOVQ aps+24(FP), R11
	MOVQ b+32(FP), BX
	MOVQ ldb+40(FP), DX
	MOVQ c+48(FP), DI
	MOVQ ldc+56(FP), R9
	MOVQ pf+64(FP), R12
	MOVQ pfs+72(FP), R13

	LEAQ (R8)(R8*2), R10
	ADDQ SI, R10         // rows 3-5

	ZERO12

	TESTQ CX, CX
	JZ    gemmstore

gemmloop:
	PREFETCHT0 (R12)
	ADDQ    R13, R12
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	DOT2((SI), Y0, Y1)
	DOT2((SI)(R8*1), Y2, Y3)
	DOT2((SI)(R8*2), Y4, Y5)
	DOT2((R10), Y6, Y7)
	DOT2((R10)(R8*1), Y8, Y9)
	DOT2((R10)(R8*2), Y10, Y11)
	ADDQ R11, SI
	ADDQ R11, R10
	ADDQ DX, BX
	DECQ CX
	JNZ  gemmloop

gemmstore:
	VBROADCASTSS alpha+80(FP), Y12
	VBROADCASTSS beta+84(FP), Y13
	MOVL         beta+84(FP), AX
	TESTL        $0x7fffffff, AX
	JZ           gemmalpha

	ROW2AB(Y0, Y1)
	ROW2AB(Y2, Y3)
	ROW2AB(Y4, Y5)
	ROW2AB(Y6, Y7)
	ROW2AB(Y8, Y9)
	ROW2AB(Y10, Y11)
	VZEROUPPER
	RET

gemmalpha:
	ROW2A(Y0, Y1)
	ROW2A(Y2, Y3)
	ROW2A(Y4, Y5)
	ROW2A(Y6, Y7)
	ROW2A(Y8, Y9)
	ROW2A(Y10, Y11)
	VZEROUPPER
	RET
