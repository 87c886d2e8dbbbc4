//go:build amd64 && !purego

#include "textflag.h"

// The layer-normalization kernels (layernorm.go gives the arithmetic and
// its order): one row at a time, 8 columns a vector, widened to float64.

// HSUM adds the 8 lanes of z into the low lane of x (z's Y and X names y
// and x) as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)); it uses Z8.
#define HSUM(z, y, x) \
	VEXTRACTF64X4 $1, z, Y8; \
	VADDPD        Y8, y, y; \
	VEXTRACTF128  $1, y, X8; \
	VADDPD        X8, x, x; \
	VPERMILPD     $1, x, X8; \
	VADDSD        X8, x, x

// func layerNormRows(a *lnArgs)
//
// Registers: SI the row of x, R10 gamma, BX beta or the row of dy
// (advanced by R13 a row: 0 for beta), DI the row of out, R12 sum, R8 the
// rows left, R9 the groups of 8 columns, DX a row's bytes, R11 the kind,
// Z13 n, X14 1, X15 eps, Z2 the row's mean, Z3 its rstd.
TEXT ·layerNormRows(SB), NOSPLIT, $0-8
	MOVQ   a+0(FP), R14
	MOVQ   0(R14), SI
	MOVQ   8(R14), R10
	MOVQ   16(R14), BX
	MOVQ   24(R14), DI
	MOVQ   32(R14), R12
	MOVQ   40(R14), R8
	MOVQ   48(R14), R9
	VMOVSD 56(R14), X15
	VBROADCASTSD 64(R14), Z13
	MOVQ   72(R14), R11
	MOVQ   R9, DX
	SHLQ   $5, DX
	MOVQ   DX, R13
	TESTQ  R11, R11
	JNZ    lnstart
	XORQ   R13, R13

lnstart:
	MOVQ   $0x3FF0000000000000, AX
	VMOVQ  AX, X14
	TESTQ  R8, R8
	JZ     lndone
	TESTQ  R9, R9
	JZ     lndone

lnrow:
	VPXORQ Z0, Z0, Z0
	XORQ   AX, AX
	MOVQ   R9, CX

lnsum:
	VCVTPS2PD (SI)(AX*4), Z20
	VADDPD    Z20, Z0, Z0
	ADDQ      $8, AX
	DECQ      CX
	JNZ       lnsum
	HSUM(Z0, Y0, X0)
	VDIVSD       X13, X0, X0
	VBROADCASTSD X0, Z2
	VPXORQ       Z1, Z1, Z1
	XORQ         AX, AX
	MOVQ         R9, CX

lnsq:
	VCVTPS2PD (SI)(AX*4), Z20
	VSUBPD    Z2, Z20, Z20
	VMULPD    Z20, Z20, Z20
	VADDPD    Z20, Z1, Z1
	ADDQ      $8, AX
	DECQ      CX
	JNZ       lnsq
	HSUM(Z1, Y1, X1)
	VDIVSD       X13, X1, X1
	VADDSD       X15, X1, X1
	VSQRTSD      X1, X1, X1
	VDIVSD       X1, X14, X1
	VBROADCASTSD X1, Z3
	XORQ         AX, AX
	MOVQ         R9, CX
	CMPQ         R11, $1
	JEQ          lngrad
	JGT          lngamma

lnfwd:
	VCVTPS2PD (SI)(AX*4), Z20
	VSUBPD    Z2, Z20, Z20
	VCVTPS2PD (R10)(AX*4), Z21
	VMULPD    Z20, Z21, Z20
	VMULPD    Z3, Z20, Z20
	VCVTPS2PD (BX)(AX*4), Z22
	VADDPD    Z22, Z20, Z20
	VCVTPD2PS Z20, Y20
	VMOVUPS   Y20, (DI)(AX*4)
	ADDQ      $8, AX
	DECQ      CX
	JNZ       lnfwd
	JMP       lnnext

lngrad:
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5

lngsum:
	VCVTPS2PD (BX)(AX*4), Z21
	VCVTPS2PD (R10)(AX*4), Z22
	VMULPD    Z21, Z22, Z21
	VADDPD    Z21, Z4, Z4
	VCVTPS2PD (SI)(AX*4), Z20
	VSUBPD    Z2, Z20, Z20
	VMULPD    Z20, Z21, Z20
	VMULPD    Z3, Z20, Z20
	VADDPD    Z20, Z5, Z5
	ADDQ      $8, AX
	DECQ      CX
	JNZ       lngsum
	HSUM(Z4, Y4, X4)
	HSUM(Z5, Y5, X5)
	VBROADCASTSD X4, Z4
	VBROADCASTSD X5, Z5
	XORQ         AX, AX
	MOVQ         R9, CX

lngout:
	VCVTPS2PD (SI)(AX*4), Z20
	VSUBPD    Z2, Z20, Z20
	VMULPD    Z3, Z20, Z20
	VMULPD    Z5, Z20, Z20
	VADDPD    Z20, Z4, Z20
	VDIVPD    Z13, Z20, Z20
	VCVTPS2PD (BX)(AX*4), Z21
	VCVTPS2PD (R10)(AX*4), Z22
	VMULPD    Z21, Z22, Z21
	VSUBPD    Z20, Z21, Z21
	VMULPD    Z3, Z21, Z21
	VCVTPD2PS Z21, Y21
	VMOVUPS   Y21, (DI)(AX*4)
	ADDQ      $8, AX
	DECQ      CX
	JNZ       lngout
	JMP       lnnext

lngamma:
	VCVTPS2PD (SI)(AX*4), Z20
	VSUBPD    Z2, Z20, Z20
	VCVTPS2PD (BX)(AX*4), Z21
	VMULPD    Z20, Z21, Z20
	VMULPD    Z3, Z20, Z20
	VADDPD    (R12)(AX*8), Z20, Z20
	VMOVUPD   Z20, (R12)(AX*8)
	ADDQ      $8, AX
	DECQ      CX
	JNZ       lngamma

lnnext:
	ADDQ DX, SI
	ADDQ R13, BX
	ADDQ DX, DI
	DECQ R8
	JNZ  lnrow

lndone:
	VZEROUPPER
	RET
