//go:build amd64 && !purego

#include "textflag.h"

// The batch-normalization kernels. Each works on groups of 8 columns of a
// float32 matrix whose rows are ld bytes apart, widening to float64 and
// doing the float64 operations one by one (no fused multiply-adds) in the
// order package ops' Go code does them, so the results are its bits. A
// column's sum runs over the rows in order, one row after another.

// func columnSums(x *float32, ld uintptr, rows, groups int, sum *float64)
//
// sum[j] += float64(x[r][j]) for r < rows, j < 8·groups.
TEXT ·columnSums(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ ld+8(FP), DX
	MOVQ rows+16(FP), R8
	MOVQ groups+24(FP), R9
	MOVQ sum+32(FP), DI

sumgroup:
	TESTQ R9, R9
	JZ    sumdone
	VMOVUPD (DI), Z0
	MOVQ  SI, AX
	MOVQ  R8, CX
	TESTQ CX, CX
	JZ    sumstore

sumrow:
	VCVTPS2PD (AX), Z1
	VADDPD    Z1, Z0, Z0
	ADDQ      DX, AX
	DECQ      CX
	JNZ       sumrow

sumstore:
	VMOVUPD Z0, (DI)
	ADDQ    $32, SI
	ADDQ    $64, DI
	DECQ    R9
	JMP     sumgroup

sumdone:
	VZEROUPPER
	RET

// func columnSquares(x *float32, ld uintptr, rows, groups int, mean, sum *float64)
//
// sum[j] += d·d, d = float64(x[r][j]) - mean[j], for r < rows, j < 8·groups.
TEXT ·columnSquares(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ ld+8(FP), DX
	MOVQ rows+16(FP), R8
	MOVQ groups+24(FP), R9
	MOVQ mean+32(FP), R10
	MOVQ sum+40(FP), DI

sqgroup:
	TESTQ R9, R9
	JZ    sqdone
	VMOVUPD (DI), Z0
	VMOVUPD (R10), Z2
	MOVQ  SI, AX
	MOVQ  R8, CX
	TESTQ CX, CX
	JZ    sqstore

sqrow:
	VCVTPS2PD (AX), Z1
	VSUBPD    Z2, Z1, Z1
	VMULPD    Z1, Z1, Z1
	VADDPD    Z1, Z0, Z0
	ADDQ      DX, AX
	DECQ      CX
	JNZ       sqrow

sqstore:
	VMOVUPD Z0, (DI)
	ADDQ    $32, SI
	ADDQ    $64, DI
	ADDQ    $64, R10
	DECQ    R9
	JMP     sqgroup

sqdone:
	VZEROUPPER
	RET

// func columnGradSums(x, dy *float32, ld uintptr, rows, groups int, mean, rstd, sumDy, sumDyXhat *float64)
//
// With xhat = (float64(x[r][j]) - mean[j])·rstd[j] and g = float64(dy[r][j]):
// sumDy[j] += g and sumDyXhat[j] += g·xhat, for r < rows, j < 8·groups.
TEXT ·columnGradSums(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), SI
	MOVQ dy+8(FP), BX
	MOVQ ld+16(FP), DX
	MOVQ rows+24(FP), R8
	MOVQ groups+32(FP), R9
	MOVQ mean+40(FP), R10
	MOVQ rstd+48(FP), R11
	MOVQ sumDy+56(FP), DI
	MOVQ sumDyXhat+64(FP), R12

gsgroup:
	TESTQ R9, R9
	JZ    gsdone
	VMOVUPD (DI), Z0
	VMOVUPD (R12), Z1
	VMOVUPD (R10), Z2
	VMOVUPD (R11), Z3
	MOVQ  SI, AX
	MOVQ  BX, R13
	MOVQ  R8, CX
	TESTQ CX, CX
	JZ    gsstore

gsrow:
	VCVTPS2PD (AX), Z4
	VSUBPD    Z2, Z4, Z4
	VMULPD    Z3, Z4, Z4
	VCVTPS2PD (R13), Z5
	VADDPD    Z5, Z0, Z0
	VMULPD    Z4, Z5, Z5
	VADDPD    Z5, Z1, Z1
	ADDQ      DX, AX
	ADDQ      DX, R13
	DECQ      CX
	JNZ       gsrow

gsstore:
	VMOVUPD Z0, (DI)
	VMOVUPD Z1, (R12)
	ADDQ    $32, SI
	ADDQ    $32, BX
	ADDQ    $64, DI
	ADDQ    $64, R12
	ADDQ    $64, R10
	ADDQ    $64, R11
	DECQ    R9
	JMP     gsgroup

gsdone:
	VZEROUPPER
	RET

// func columnGammaGrad(x, dy *float32, ld uintptr, rows, groups int, mean, rstd, sum *float64)
//
// sum[j] += g·(float64(x[r][j]) - mean[j])·rstd[j], g = float64(dy[r][j]),
// multiplied left to right, for r < rows, j < 8·groups.
TEXT ·columnGammaGrad(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ dy+8(FP), BX
	MOVQ ld+16(FP), DX
	MOVQ rows+24(FP), R8
	MOVQ groups+32(FP), R9
	MOVQ mean+40(FP), R10
	MOVQ rstd+48(FP), R11
	MOVQ sum+56(FP), DI

gggroup:
	TESTQ R9, R9
	JZ    ggdone
	VMOVUPD (DI), Z0
	VMOVUPD (R10), Z2
	VMOVUPD (R11), Z3
	MOVQ  SI, AX
	MOVQ  BX, R13
	MOVQ  R8, CX
	TESTQ CX, CX
	JZ    ggstore

ggrow:
	VCVTPS2PD (AX), Z4
	VSUBPD    Z2, Z4, Z4
	VCVTPS2PD (R13), Z5
	VMULPD    Z4, Z5, Z5
	VMULPD    Z3, Z5, Z5
	VADDPD    Z5, Z0, Z0
	ADDQ      DX, AX
	ADDQ      DX, R13
	DECQ      CX
	JNZ       ggrow

ggstore:
	VMOVUPD Z0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, BX
	ADDQ    $64, DI
	ADDQ    $64, R10
	ADDQ    $64, R11
	DECQ    R9
	JMP     gggroup

ggdone:
	VZEROUPPER
	RET

// func scaleShiftRows(x, out *float32, ld uintptr, rows, groups int, scale, shift *float32, relu int)
//
// out[r][j] = x[r][j]·scale[j] + shift[j] in float32, rounded after each
// operation, for r < rows, j < 8·groups; with relu ≠ 0, max of that and
// +0 (0 for NaN, as the ReLU activation's v > 0 test).
TEXT ·scaleShiftRows(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ out+8(FP), DI
	MOVQ ld+16(FP), DX
	MOVQ rows+24(FP), R8
	MOVQ groups+32(FP), R9
	MOVQ scale+40(FP), R10
	MOVQ shift+48(FP), R11
	MOVQ relu+56(FP), BX
	TESTQ R8, R8
	JZ    ssdone
	TESTQ R9, R9
	JZ    ssdone
	VXORPS Y0, Y0, Y0
	TESTQ BX, BX
	JNZ   ssrelurow

ssrow:
	XORQ AX, AX
	MOVQ R9, CX

sscol:
	VMOVUPS (SI)(AX*4), Y1
	VMULPS  (R10)(AX*4), Y1, Y1
	VADDPS  (R11)(AX*4), Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX
	DECQ    CX
	JNZ     sscol
	ADDQ    DX, SI
	ADDQ    DX, DI
	DECQ    R8
	JNZ     ssrow
	JMP     ssdone

ssrelurow:
	XORQ AX, AX
	MOVQ R9, CX

ssrelucol:
	VMOVUPS (SI)(AX*4), Y1
	VMULPS  (R10)(AX*4), Y1, Y1
	VADDPS  (R11)(AX*4), Y1, Y1
	VMAXPS  Y0, Y1, Y1 // Y1 > +0 ? Y1 : +0, and +0 for NaN
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX
	DECQ    CX
	JNZ     ssrelucol
	ADDQ    DX, SI
	ADDQ    DX, DI
	DECQ    R8
	JNZ     ssrelurow

ssdone:
	VZEROUPPER
	RET

// One group of 8 columns of normGradRows with batch statistics, n
// applied by SCALE: VDIVPD by n, or VMULPD by 1/n where that is exact.
#define NORMGRAD8(SCALE) \
	VCVTPS2PD (SI)(AX*4), Z1; \
	VSUBPD    (R10)(AX*8), Z1, Z1; \
	VMULPD    (R11)(AX*8), Z1, Z1; \
	VMULPD    (R15)(AX*8), Z1, Z1; \
	VADDPD    (R13)(AX*8), Z1, Z1; \
	SCALE     Z7, Z1, Z1; \
	VCVTPS2PD (BX)(AX*4), Z2; \
	VSUBPD    Z1, Z2, Z2; \
	VMULPD    (R12)(AX*8), Z2, Z2; \
	VCVTPD2PS Z2, Y2; \
	VMOVUPS   Y2, (DI)(AX*4)

// func normGradRows(x, dy, out *float32, ld uintptr, rows, groups int, k *GradConstants)
//
// out[r][j] = float32(gr[j]·v) for r < rows, j < 8·groups, where
// g = float64(dy[r][j]) and v = g - (sumDy[j] + xhat·sumDyXhat[j])/n,
// xhat = (float64(x[r][j]) - mean[j])·rstd[j], with batch statistics
// (k.BatchStats != 0), v = g without. Where n is a power of 2, k.N holds
// 1/n (k.Reciprocal != 0) and the kernel multiplies by it: the same bits,
// as scaling by a power of 2 is exact, without the divider's wait.
TEXT ·normGradRows(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ dy+8(FP), BX
	MOVQ out+16(FP), DI
	MOVQ ld+24(FP), DX
	MOVQ rows+32(FP), R8
	MOVQ groups+40(FP), R9
	MOVQ k+48(FP), R14
	MOVQ 0(R14), R10           // Mean
	MOVQ 8(R14), R11           // Rstd
	MOVQ 16(R14), R12          // GammaRstd
	MOVQ 24(R14), R13          // SumDy
	MOVQ 32(R14), R15          // SumDyXhat
	VBROADCASTSD 40(R14), Z7   // N
	MOVQ 48(R14), CX           // BatchStats
	MOVQ 56(R14), AX           // Reciprocal: N holds 1/n, a power of 2
	TESTQ R8, R8
	JZ    ngdone
	TESTQ R9, R9
	JZ    ngdone
	TESTQ CX, CX
	JZ    ngfixedrow
	TESTQ AX, AX
	JNZ   ngrecrow

ngrow:
	XORQ AX, AX
	MOVQ R9, CX

ngcol:
	NORMGRAD8(VDIVPD)
	ADDQ      $8, AX
	DECQ      CX
	JNZ       ngcol
	ADDQ      DX, SI
	ADDQ      DX, BX
	ADDQ      DX, DI
	DECQ      R8
	JNZ       ngrow
	JMP       ngdone

ngrecrow:
	XORQ AX, AX
	MOVQ R9, CX

ngreccol:
	NORMGRAD8(VMULPD)
	ADDQ      $8, AX
	DECQ      CX
	JNZ       ngreccol
	ADDQ      DX, SI
	ADDQ      DX, BX
	ADDQ      DX, DI
	DECQ      R8
	JNZ       ngrecrow
	JMP       ngdone

ngfixedrow:
	XORQ AX, AX
	MOVQ R9, CX

ngfixedcol:
	VCVTPS2PD (BX)(AX*4), Z2
	VMULPD    (R12)(AX*8), Z2, Z2
	VCVTPD2PS Z2, Y2
	VMOVUPS   Y2, (DI)(AX*4)
	ADDQ      $8, AX
	DECQ      CX
	JNZ       ngfixedcol
	ADDQ      DX, BX
	ADDQ      DX, DI
	DECQ      R8
	JNZ       ngfixedrow

ngdone:
	VZEROUPPER
	RET
