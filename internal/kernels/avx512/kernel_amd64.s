//go:build amd64 && !purego

#include "textflag.h"

// The kernels keep a tile of the result in the 32 AVX-512 registers and
// stream the operands past it. Z0-Z23 accumulate, Z24-Z26 hold a row of
// the wide operand, Z30 and Z31 alpha and beta.

#define ZERO24 \
	VPXORD Z0, Z0, Z0; VPXORD Z1, Z1, Z1; VPXORD Z2, Z2, Z2; VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; VPXORD Z5, Z5, Z5; VPXORD Z6, Z6, Z6; VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; VPXORD Z9, Z9, Z9; VPXORD Z10, Z10, Z10; VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; VPXORD Z13, Z13, Z13; VPXORD Z14, Z14, Z14; VPXORD Z15, Z15, Z15; \
	VPXORD Z16, Z16, Z16; VPXORD Z17, Z17, Z17; VPXORD Z18, Z18, Z18; VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; VPXORD Z21, Z21, Z21; VPXORD Z22, Z22, Z22; VPXORD Z23, Z23, Z23

// One step of panel8x48: a row of b (three vectors, masked) times the eight
// a values at off(SI), broadcast.
#define STEP8x48(off) \
	VMOVUPS.Z (BX), K1, Z24; \
	VMOVUPS.Z 64(BX), K2, Z25; \
	VMOVUPS.Z 128(BX), K3, Z26; \
	VFMADD231PS.BCST 0(SI), Z24, Z0; \
	VFMADD231PS.BCST 0(SI), Z25, Z1; \
	VFMADD231PS.BCST 0(SI), Z26, Z2; \
	VFMADD231PS.BCST 4(SI), Z24, Z3; \
	VFMADD231PS.BCST 4(SI), Z25, Z4; \
	VFMADD231PS.BCST 4(SI), Z26, Z5; \
	VFMADD231PS.BCST 8(SI), Z24, Z6; \
	VFMADD231PS.BCST 8(SI), Z25, Z7; \
	VFMADD231PS.BCST 8(SI), Z26, Z8; \
	VFMADD231PS.BCST 12(SI), Z24, Z9; \
	VFMADD231PS.BCST 12(SI), Z25, Z10; \
	VFMADD231PS.BCST 12(SI), Z26, Z11; \
	VFMADD231PS.BCST 16(SI), Z24, Z12; \
	VFMADD231PS.BCST 16(SI), Z25, Z13; \
	VFMADD231PS.BCST 16(SI), Z26, Z14; \
	VFMADD231PS.BCST 20(SI), Z24, Z15; \
	VFMADD231PS.BCST 20(SI), Z25, Z16; \
	VFMADD231PS.BCST 20(SI), Z26, Z17; \
	VFMADD231PS.BCST 24(SI), Z24, Z18; \
	VFMADD231PS.BCST 24(SI), Z25, Z19; \
	VFMADD231PS.BCST 24(SI), Z26, Z20; \
	VFMADD231PS.BCST 28(SI), Z24, Z21; \
	VFMADD231PS.BCST 28(SI), Z25, Z22; \
	VFMADD231PS.BCST 28(SI), Z26, Z23

// Row r of the epilogue with beta ≠ 0: c = alpha·acc + beta·c, masked.
#define ROWAB(r0, r1, r2) \
	VMULPS Z30, r0, r0; \
	VMULPS Z30, r1, r1; \
	VMULPS Z30, r2, r2; \
	VMOVUPS.Z (DI), K1, Z27; \
	VMOVUPS.Z 64(DI), K2, Z28; \
	VMOVUPS.Z 128(DI), K3, Z29; \
	VFMADD231PS Z27, Z31, r0; \
	VFMADD231PS Z28, Z31, r1; \
	VFMADD231PS Z29, Z31, r2; \
	VMOVUPS r0, K1, (DI); \
	VMOVUPS r1, K2, 64(DI); \
	VMOVUPS r2, K3, 128(DI); \
	ADDQ R9, DI; \
	DECQ R11; \
	JZ   done

// Row r of the epilogue with beta = 0: c = alpha·acc, masked.
#define ROWA(r0, r1, r2) \
	VMULPS Z30, r0, r0; \
	VMULPS Z30, r1, r1; \
	VMULPS Z30, r2, r2; \
	VMOVUPS r0, K1, (DI); \
	VMOVUPS r1, K2, 64(DI); \
	VMOVUPS r2, K3, 128(DI); \
	ADDQ R9, DI; \
	DECQ R11; \
	JZ   done

// func panel8x48(kc int, a *float32, lda uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, rows int, masks uint64, pf *float32, alpha, beta float32)
//
// c[r][j] = alpha·Σ_{p<kc} a[p·lda + r]·b[p·ldb + j] + beta·c[r][j]
// for r < rows ≤ 8 and the columns j < 48 whose bit is set in masks (bits
// 0-15, 16-31, 32-47 for the three vectors); lda, ldb and ldc are in bytes.
// a must hold eight readable values per step. beta = 0 does not read c.
// pf is the next tile of c, eight rows of 192 bytes with stride ldc, which
// the kernel asks the caches to fetch while it computes.
TEXT ·panel8x48(SB), NOSPLIT, $0-88
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), BX
	MOVQ ldb+32(FP), DX
	MOVQ c+40(FP), DI
	MOVQ ldc+48(FP), R9
	MOVQ rows+56(FP), R11
	MOVQ masks+64(FP), AX
	KMOVW AX, K1
	SHRQ $16, AX
	KMOVW AX, K2
	SHRQ $16, AX
	KMOVW AX, K3

	// Fetch the next tile of c.
	MOVQ pf+72(FP), R12
	MOVQ $8, R13
pfloop:
	PREFETCHT0 (R12)
	PREFETCHT0 64(R12)
	PREFETCHT0 128(R12)
	ADDQ R9, R12
	DECQ R13
	JNZ  pfloop

	ZERO24

	// R10 runs sixteen rows ahead of b: weight rows are far apart in
	// memory, and the hardware prefetcher does not cross pages.
	MOVQ DX, R10
	SHLQ $4, R10
	ADDQ BX, R10

	TESTQ CX, CX
	JZ   epilogue

loop:
	STEP8x48(0)
	PREFETCHT0 (R10)
	PREFETCHT0 64(R10)
	PREFETCHT0 128(R10)
	ADDQ R8, SI
	ADDQ DX, BX
	ADDQ DX, R10
	DECQ CX
	JNZ  loop

epilogue:
	VBROADCASTSS alpha+80(FP), Z30
	VBROADCASTSS beta+84(FP), Z31
	MOVL beta+84(FP), AX
	TESTL $0x7fffffff, AX
	JZ   alphaonly

	ROWAB(Z0, Z1, Z2)
	ROWAB(Z3, Z4, Z5)
	ROWAB(Z6, Z7, Z8)
	ROWAB(Z9, Z10, Z11)
	ROWAB(Z12, Z13, Z14)
	ROWAB(Z15, Z16, Z17)
	ROWAB(Z18, Z19, Z20)
	ROWAB(Z21, Z22, Z23)
	JMP  done

alphaonly:
	ROWA(Z0, Z1, Z2)
	ROWA(Z3, Z4, Z5)
	ROWA(Z6, Z7, Z8)
	ROWA(Z9, Z10, Z11)
	ROWA(Z12, Z13, Z14)
	ROWA(Z15, Z16, Z17)
	ROWA(Z18, Z19, Z20)
	ROWA(Z21, Z22, Z23)

done:
	VZEROUPPER
	RET

// func dot12x32(n int, w *float32, ldw uintptr, bt *float32, tile *float32)
//
// tile[r][i] = Σ_{p<n} w[r·ldw + p]·bt[p·32 + i] for r < 12, i < 32: twelve
// rows of w (stride ldw bytes, all readable) against bt, packed 32 wide.
TEXT ·dot12x32(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ ldw+16(FP), R8
	MOVQ bt+24(FP), BX
	MOVQ tile+32(FP), DI

	LEAQ (R8)(R8*2), R9   // 3·ldw
	LEAQ (SI)(R8*4), R10  // rows 4-7
	LEAQ (R10)(R8*4), R11 // rows 8-11

	ZERO24

	TESTQ CX, CX
	JZ   store

dotloop:
	VMOVUPS (BX), Z24
	VMOVUPS 64(BX), Z25
	VFMADD231PS.BCST (SI), Z24, Z0
	VFMADD231PS.BCST (SI), Z25, Z1
	VFMADD231PS.BCST (SI)(R8*1), Z24, Z2
	VFMADD231PS.BCST (SI)(R8*1), Z25, Z3
	VFMADD231PS.BCST (SI)(R8*2), Z24, Z4
	VFMADD231PS.BCST (SI)(R8*2), Z25, Z5
	VFMADD231PS.BCST (SI)(R9*1), Z24, Z6
	VFMADD231PS.BCST (SI)(R9*1), Z25, Z7
	VFMADD231PS.BCST (R10), Z24, Z8
	VFMADD231PS.BCST (R10), Z25, Z9
	VFMADD231PS.BCST (R10)(R8*1), Z24, Z10
	VFMADD231PS.BCST (R10)(R8*1), Z25, Z11
	VFMADD231PS.BCST (R10)(R8*2), Z24, Z12
	VFMADD231PS.BCST (R10)(R8*2), Z25, Z13
	VFMADD231PS.BCST (R10)(R9*1), Z24, Z14
	VFMADD231PS.BCST (R10)(R9*1), Z25, Z15
	VFMADD231PS.BCST (R11), Z24, Z16
	VFMADD231PS.BCST (R11), Z25, Z17
	VFMADD231PS.BCST (R11)(R8*1), Z24, Z18
	VFMADD231PS.BCST (R11)(R8*1), Z25, Z19
	VFMADD231PS.BCST (R11)(R8*2), Z24, Z20
	VFMADD231PS.BCST (R11)(R8*2), Z25, Z21
	VFMADD231PS.BCST (R11)(R9*1), Z24, Z22
	VFMADD231PS.BCST (R11)(R9*1), Z25, Z23
	ADDQ $128, BX
	ADDQ $4, SI
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ  dotloop

store:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z4, 256(DI)
	VMOVUPS Z5, 320(DI)
	VMOVUPS Z6, 384(DI)
	VMOVUPS Z7, 448(DI)
	VMOVUPS Z8, 512(DI)
	VMOVUPS Z9, 576(DI)
	VMOVUPS Z10, 640(DI)
	VMOVUPS Z11, 704(DI)
	VMOVUPS Z12, 768(DI)
	VMOVUPS Z13, 832(DI)
	VMOVUPS Z14, 896(DI)
	VMOVUPS Z15, 960(DI)
	VMOVUPS Z16, 1024(DI)
	VMOVUPS Z17, 1088(DI)
	VMOVUPS Z18, 1152(DI)
	VMOVUPS Z19, 1216(DI)
	VMOVUPS Z20, 1280(DI)
	VMOVUPS Z21, 1344(DI)
	VMOVUPS Z22, 1408(DI)
	VMOVUPS Z23, 1472(DI)
	VZEROUPPER
	RET

// func maskPositive(x, v, out *float32, n int)
//
// out[i] = v[i] where x[i] > 0, else +0, for i < n, a multiple of 32.
TEXT ·maskPositive(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ v+8(FP), DX
	MOVQ out+16(FP), DI
	MOVQ n+24(FP), CX
	SHRQ $5, CX
	JZ   maskdone
	VPXORD Z31, Z31, Z31

maskloop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VCMPPS $0x1e, Z31, Z0, K1 // x > 0, false for NaN
	VCMPPS $0x1e, Z31, Z1, K2
	VMOVUPS.Z (DX), K1, Z2
	VMOVUPS.Z 64(DX), K2, Z3
	VMOVUPS Z2, (DI)
	VMOVUPS Z3, 64(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	DECQ CX
	JNZ  maskloop

maskdone:
	VZEROUPPER
	RET

// func sumRows(a *float32, rows, cols int, out *float32)
//
// out[c] += a[r·cols+c] for each row r in order, column by column: 16
// columns at a time (the last block masked), each column's sum one chain
// of adds in row order.
TEXT ·sumRows(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ rows+8(FP), R8
	MOVQ cols+16(FP), R9
	MOVQ out+24(FP), DI
	LEAQ (R9*4), R10           // row stride in bytes
	XORQ BX, BX                // first column of the block
sumblock:
	CMPQ BX, R9
	JGE  sumdone
	MOVQ R9, CX
	SUBQ BX, CX                // columns left
	MOVQ $0xFFFF, AX
	CMPQ CX, $16
	JGE  summask
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
summask:
	KMOVW AX, K1
	VMOVUPS.Z (DI)(BX*4), K1, Z0
	LEAQ (SI)(BX*4), DX
	MOVQ R8, CX
	TESTQ CX, CX
	JZ   sumstore
sumrow:
	VMOVUPS.Z (DX), K1, Z1
	VADDPS Z1, Z0, Z0
	ADDQ R10, DX
	DECQ CX
	JNZ  sumrow
sumstore:
	VMOVUPS Z0, K1, (DI)(BX*4)
	ADDQ $16, BX
	JMP  sumblock
sumdone:
	VZEROUPPER
	RET
