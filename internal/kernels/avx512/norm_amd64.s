//go:build amd64 && !purego

#include "textflag.h"

// The batch-normalization kernels. Each works on groups of 8 columns of a
// float32 matrix whose rows are ld bytes apart, widening to float64 and
// doing the float64 operations one by one (no fused multiply-adds) in the
// order package ops' Go code does them, so the results are its bits. The
// batch statistics' sums and their gradient's (columnSums, columnSquares,
// columnGradSums) keep four chains a column, row r added to chain r mod 4
// in order, two groups of 8 columns (a 64-byte line of a row) at a time;
// columnGammaGrad's sum runs over the rows in order.

// func columnSums(x *float32, ld uintptr, rows, groups int, sum *float64)
//
// sum[j] += (p0+p1)+(p2+p3) for j < 8·groups, where pk is the sum of
// float64(x[r][j]) over the rows r ≡ k (mod 4) in order: four chains of
// additions, so that a few columns' sums do not wait on each addition.
TEXT ·columnSums(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ ld+8(FP), DX
	MOVQ rows+16(FP), R8
	MOVQ groups+24(FP), R9
	MOVQ sum+32(FP), DI
	LEAQ (DX)(DX*2), R14

cspairs:
	CMPQ R9, $2
	JLT csone
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	MOVQ SI, AX
	MOVQ R8, CX

cs2loop:
	CMPQ CX, $4
	JLT cs2tail
	VCVTPS2PD (AX), Z20
	VADDPD Z20, Z0, Z0
	VCVTPS2PD 32(AX), Z22
	VADDPD Z22, Z1, Z1
	VCVTPS2PD (AX)(DX*1), Z24
	VADDPD Z24, Z2, Z2
	VCVTPS2PD 32(AX)(DX*1), Z26
	VADDPD Z26, Z3, Z3
	VCVTPS2PD (AX)(DX*2), Z28
	VADDPD Z28, Z4, Z4
	VCVTPS2PD 32(AX)(DX*2), Z30
	VADDPD Z30, Z5, Z5
	VCVTPS2PD (AX)(R14*1), Z20
	VADDPD Z20, Z6, Z6
	VCVTPS2PD 32(AX)(R14*1), Z22
	VADDPD Z22, Z7, Z7
	LEAQ (AX)(DX*4), AX
	SUBQ $4, CX
	JMP cs2loop

cs2tail:
	TESTQ CX, CX
	JZ cs2fold
	VCVTPS2PD (AX), Z20
	VADDPD Z20, Z0, Z0
	VCVTPS2PD 32(AX), Z22
	VADDPD Z22, Z1, Z1
	DECQ CX
	JZ cs2fold
	VCVTPS2PD (AX)(DX*1), Z24
	VADDPD Z24, Z2, Z2
	VCVTPS2PD 32(AX)(DX*1), Z26
	VADDPD Z26, Z3, Z3
	DECQ CX
	JZ cs2fold
	VCVTPS2PD (AX)(DX*2), Z28
	VADDPD Z28, Z4, Z4
	VCVTPS2PD 32(AX)(DX*2), Z30
	VADDPD Z30, Z5, Z5

cs2fold:
	VADDPD Z2, Z0, Z0
	VADDPD Z6, Z4, Z4
	VADDPD Z4, Z0, Z0
	VADDPD (DI), Z0, Z0
	VMOVUPD Z0, (DI)
	VADDPD Z3, Z1, Z1
	VADDPD Z7, Z5, Z5
	VADDPD Z5, Z1, Z1
	VADDPD 64(DI), Z1, Z1
	VMOVUPD Z1, 64(DI)
	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $2, R9
	JMP cspairs

csone:
	TESTQ R9, R9
	JZ csdone
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	MOVQ SI, AX
	MOVQ R8, CX

cs1loop:
	CMPQ CX, $4
	JLT cs1tail
	VCVTPS2PD (AX), Z20
	VADDPD Z20, Z0, Z0
	VCVTPS2PD (AX)(DX*1), Z22
	VADDPD Z22, Z1, Z1
	VCVTPS2PD (AX)(DX*2), Z24
	VADDPD Z24, Z2, Z2
	VCVTPS2PD (AX)(R14*1), Z26
	VADDPD Z26, Z3, Z3
	LEAQ (AX)(DX*4), AX
	SUBQ $4, CX
	JMP cs1loop

cs1tail:
	TESTQ CX, CX
	JZ cs1fold
	VCVTPS2PD (AX), Z20
	VADDPD Z20, Z0, Z0
	DECQ CX
	JZ cs1fold
	VCVTPS2PD (AX)(DX*1), Z22
	VADDPD Z22, Z1, Z1
	DECQ CX
	JZ cs1fold
	VCVTPS2PD (AX)(DX*2), Z24
	VADDPD Z24, Z2, Z2

cs1fold:
	VADDPD Z1, Z0, Z0
	VADDPD Z3, Z2, Z2
	VADDPD Z2, Z0, Z0
	VADDPD (DI), Z0, Z0
	VMOVUPD Z0, (DI)
	ADDQ $32, SI
	ADDQ $64, DI
	SUBQ $1, R9
	JMP csone

csdone:
	VZEROUPPER
	RET


// func columnSquares(x *float32, ld uintptr, rows, groups int, mean, sum *float64)
//
// sum[j] += (p0+p1)+(p2+p3), pk the sum of d·d, d = float64(x[r][j]) -
// mean[j], over the rows r ≡ k (mod 4) in order, for j < 8·groups.
TEXT ·columnSquares(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ ld+8(FP), DX
	MOVQ rows+16(FP), R8
	MOVQ groups+24(FP), R9
	MOVQ mean+32(FP), R10
	MOVQ sum+40(FP), DI
	LEAQ (DX)(DX*2), R14

cqpairs:
	CMPQ R9, $2
	JLT cqone
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VMOVUPD (R10), Z16
	VMOVUPD 64(R10), Z17
	MOVQ SI, AX
	MOVQ R8, CX

cq2loop:
	CMPQ CX, $4
	JLT cq2tail
	VCVTPS2PD (AX), Z20
	VSUBPD Z16, Z20, Z20
	VMULPD Z20, Z20, Z20
	VADDPD Z20, Z0, Z0
	VCVTPS2PD 32(AX), Z22
	VSUBPD Z17, Z22, Z22
	VMULPD Z22, Z22, Z22
	VADDPD Z22, Z1, Z1
	VCVTPS2PD (AX)(DX*1), Z24
	VSUBPD Z16, Z24, Z24
	VMULPD Z24, Z24, Z24
	VADDPD Z24, Z2, Z2
	VCVTPS2PD 32(AX)(DX*1), Z26
	VSUBPD Z17, Z26, Z26
	VMULPD Z26, Z26, Z26
	VADDPD Z26, Z3, Z3
	VCVTPS2PD (AX)(DX*2), Z28
	VSUBPD Z16, Z28, Z28
	VMULPD Z28, Z28, Z28
	VADDPD Z28, Z4, Z4
	VCVTPS2PD 32(AX)(DX*2), Z30
	VSUBPD Z17, Z30, Z30
	VMULPD Z30, Z30, Z30
	VADDPD Z30, Z5, Z5
	VCVTPS2PD (AX)(R14*1), Z20
	VSUBPD Z16, Z20, Z20
	VMULPD Z20, Z20, Z20
	VADDPD Z20, Z6, Z6
	VCVTPS2PD 32(AX)(R14*1), Z22
	VSUBPD Z17, Z22, Z22
	VMULPD Z22, Z22, Z22
	VADDPD Z22, Z7, Z7
	LEAQ (AX)(DX*4), AX
	SUBQ $4, CX
	JMP cq2loop

cq2tail:
	TESTQ CX, CX
	JZ cq2fold
	VCVTPS2PD (AX), Z20
	VSUBPD Z16, Z20, Z20
	VMULPD Z20, Z20, Z20
	VADDPD Z20, Z0, Z0
	VCVTPS2PD 32(AX), Z22
	VSUBPD Z17, Z22, Z22
	VMULPD Z22, Z22, Z22
	VADDPD Z22, Z1, Z1
	DECQ CX
	JZ cq2fold
	VCVTPS2PD (AX)(DX*1), Z24
	VSUBPD Z16, Z24, Z24
	VMULPD Z24, Z24, Z24
	VADDPD Z24, Z2, Z2
	VCVTPS2PD 32(AX)(DX*1), Z26
	VSUBPD Z17, Z26, Z26
	VMULPD Z26, Z26, Z26
	VADDPD Z26, Z3, Z3
	DECQ CX
	JZ cq2fold
	VCVTPS2PD (AX)(DX*2), Z28
	VSUBPD Z16, Z28, Z28
	VMULPD Z28, Z28, Z28
	VADDPD Z28, Z4, Z4
	VCVTPS2PD 32(AX)(DX*2), Z30
	VSUBPD Z17, Z30, Z30
	VMULPD Z30, Z30, Z30
	VADDPD Z30, Z5, Z5

cq2fold:
	VADDPD Z2, Z0, Z0
	VADDPD Z6, Z4, Z4
	VADDPD Z4, Z0, Z0
	VADDPD (DI), Z0, Z0
	VMOVUPD Z0, (DI)
	VADDPD Z3, Z1, Z1
	VADDPD Z7, Z5, Z5
	VADDPD Z5, Z1, Z1
	VADDPD 64(DI), Z1, Z1
	VMOVUPD Z1, 64(DI)
	ADDQ $64, SI
	ADDQ $128, DI
	ADDQ $128, R10
	SUBQ $2, R9
	JMP cqpairs

cqone:
	TESTQ R9, R9
	JZ cqdone
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VMOVUPD (R10), Z16
	MOVQ SI, AX
	MOVQ R8, CX

cq1loop:
	CMPQ CX, $4
	JLT cq1tail
	VCVTPS2PD (AX), Z20
	VSUBPD Z16, Z20, Z20
	VMULPD Z20, Z20, Z20
	VADDPD Z20, Z0, Z0
	VCVTPS2PD (AX)(DX*1), Z22
	VSUBPD Z16, Z22, Z22
	VMULPD Z22, Z22, Z22
	VADDPD Z22, Z1, Z1
	VCVTPS2PD (AX)(DX*2), Z24
	VSUBPD Z16, Z24, Z24
	VMULPD Z24, Z24, Z24
	VADDPD Z24, Z2, Z2
	VCVTPS2PD (AX)(R14*1), Z26
	VSUBPD Z16, Z26, Z26
	VMULPD Z26, Z26, Z26
	VADDPD Z26, Z3, Z3
	LEAQ (AX)(DX*4), AX
	SUBQ $4, CX
	JMP cq1loop

cq1tail:
	TESTQ CX, CX
	JZ cq1fold
	VCVTPS2PD (AX), Z20
	VSUBPD Z16, Z20, Z20
	VMULPD Z20, Z20, Z20
	VADDPD Z20, Z0, Z0
	DECQ CX
	JZ cq1fold
	VCVTPS2PD (AX)(DX*1), Z22
	VSUBPD Z16, Z22, Z22
	VMULPD Z22, Z22, Z22
	VADDPD Z22, Z1, Z1
	DECQ CX
	JZ cq1fold
	VCVTPS2PD (AX)(DX*2), Z24
	VSUBPD Z16, Z24, Z24
	VMULPD Z24, Z24, Z24
	VADDPD Z24, Z2, Z2

cq1fold:
	VADDPD Z1, Z0, Z0
	VADDPD Z3, Z2, Z2
	VADDPD Z2, Z0, Z0
	VADDPD (DI), Z0, Z0
	VMOVUPD Z0, (DI)
	ADDQ $32, SI
	ADDQ $64, DI
	ADDQ $64, R10
	SUBQ $1, R9
	JMP cqone

cqdone:
	VZEROUPPER
	RET


// func columnGradSums(x, dy *float32, ld uintptr, rows, groups int, mean, rstd, sumDy, sumDyXhat *float64)
//
// With xhat = (float64(x[r][j]) - mean[j])·rstd[j] and g = float64(dy[r][j]):
// sumDy[j] += (p0+p1)+(p2+p3), pk the sum of g over the rows r ≡ k (mod 4)
// in order, and sumDyXhat[j] likewise of g·xhat, for j < 8·groups.
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
	LEAQ (DX)(DX*2), R14

cgpairs:
	CMPQ R9, $2
	JLT cgone
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	VPXORQ Z13, Z13, Z13
	VPXORQ Z14, Z14, Z14
	VPXORQ Z15, Z15, Z15
	VMOVUPD (R10), Z16
	VMOVUPD 64(R10), Z17
	VMOVUPD (R11), Z18
	VMOVUPD 64(R11), Z19
	MOVQ SI, AX
	MOVQ BX, R13
	MOVQ R8, CX

cg2loop:
	CMPQ CX, $4
	JLT cg2tail
	VCVTPS2PD (AX), Z20
	VSUBPD Z16, Z20, Z20
	VMULPD Z18, Z20, Z20
	VCVTPS2PD (R13), Z21
	VADDPD Z21, Z0, Z0
	VMULPD Z20, Z21, Z21
	VADDPD Z21, Z8, Z8
	VCVTPS2PD 32(AX), Z22
	VSUBPD Z17, Z22, Z22
	VMULPD Z19, Z22, Z22
	VCVTPS2PD 32(R13), Z23
	VADDPD Z23, Z1, Z1
	VMULPD Z22, Z23, Z23
	VADDPD Z23, Z9, Z9
	VCVTPS2PD (AX)(DX*1), Z24
	VSUBPD Z16, Z24, Z24
	VMULPD Z18, Z24, Z24
	VCVTPS2PD (R13)(DX*1), Z25
	VADDPD Z25, Z2, Z2
	VMULPD Z24, Z25, Z25
	VADDPD Z25, Z10, Z10
	VCVTPS2PD 32(AX)(DX*1), Z26
	VSUBPD Z17, Z26, Z26
	VMULPD Z19, Z26, Z26
	VCVTPS2PD 32(R13)(DX*1), Z27
	VADDPD Z27, Z3, Z3
	VMULPD Z26, Z27, Z27
	VADDPD Z27, Z11, Z11
	VCVTPS2PD (AX)(DX*2), Z28
	VSUBPD Z16, Z28, Z28
	VMULPD Z18, Z28, Z28
	VCVTPS2PD (R13)(DX*2), Z29
	VADDPD Z29, Z4, Z4
	VMULPD Z28, Z29, Z29
	VADDPD Z29, Z12, Z12
	VCVTPS2PD 32(AX)(DX*2), Z30
	VSUBPD Z17, Z30, Z30
	VMULPD Z19, Z30, Z30
	VCVTPS2PD 32(R13)(DX*2), Z31
	VADDPD Z31, Z5, Z5
	VMULPD Z30, Z31, Z31
	VADDPD Z31, Z13, Z13
	VCVTPS2PD (AX)(R14*1), Z20
	VSUBPD Z16, Z20, Z20
	VMULPD Z18, Z20, Z20
	VCVTPS2PD (R13)(R14*1), Z21
	VADDPD Z21, Z6, Z6
	VMULPD Z20, Z21, Z21
	VADDPD Z21, Z14, Z14
	VCVTPS2PD 32(AX)(R14*1), Z22
	VSUBPD Z17, Z22, Z22
	VMULPD Z19, Z22, Z22
	VCVTPS2PD 32(R13)(R14*1), Z23
	VADDPD Z23, Z7, Z7
	VMULPD Z22, Z23, Z23
	VADDPD Z23, Z15, Z15
	LEAQ (AX)(DX*4), AX
	LEAQ (R13)(DX*4), R13
	SUBQ $4, CX
	JMP cg2loop

cg2tail:
	TESTQ CX, CX
	JZ cg2fold
	VCVTPS2PD (AX), Z20
	VSUBPD Z16, Z20, Z20
	VMULPD Z18, Z20, Z20
	VCVTPS2PD (R13), Z21
	VADDPD Z21, Z0, Z0
	VMULPD Z20, Z21, Z21
	VADDPD Z21, Z8, Z8
	VCVTPS2PD 32(AX), Z22
	VSUBPD Z17, Z22, Z22
	VMULPD Z19, Z22, Z22
	VCVTPS2PD 32(R13), Z23
	VADDPD Z23, Z1, Z1
	VMULPD Z22, Z23, Z23
	VADDPD Z23, Z9, Z9
	DECQ CX
	JZ cg2fold
	VCVTPS2PD (AX)(DX*1), Z24
	VSUBPD Z16, Z24, Z24
	VMULPD Z18, Z24, Z24
	VCVTPS2PD (R13)(DX*1), Z25
	VADDPD Z25, Z2, Z2
	VMULPD Z24, Z25, Z25
	VADDPD Z25, Z10, Z10
	VCVTPS2PD 32(AX)(DX*1), Z26
	VSUBPD Z17, Z26, Z26
	VMULPD Z19, Z26, Z26
	VCVTPS2PD 32(R13)(DX*1), Z27
	VADDPD Z27, Z3, Z3
	VMULPD Z26, Z27, Z27
	VADDPD Z27, Z11, Z11
	DECQ CX
	JZ cg2fold
	VCVTPS2PD (AX)(DX*2), Z28
	VSUBPD Z16, Z28, Z28
	VMULPD Z18, Z28, Z28
	VCVTPS2PD (R13)(DX*2), Z29
	VADDPD Z29, Z4, Z4
	VMULPD Z28, Z29, Z29
	VADDPD Z29, Z12, Z12
	VCVTPS2PD 32(AX)(DX*2), Z30
	VSUBPD Z17, Z30, Z30
	VMULPD Z19, Z30, Z30
	VCVTPS2PD 32(R13)(DX*2), Z31
	VADDPD Z31, Z5, Z5
	VMULPD Z30, Z31, Z31
	VADDPD Z31, Z13, Z13

cg2fold:
	VADDPD Z2, Z0, Z0
	VADDPD Z6, Z4, Z4
	VADDPD Z4, Z0, Z0
	VADDPD (DI), Z0, Z0
	VMOVUPD Z0, (DI)
	VADDPD Z3, Z1, Z1
	VADDPD Z7, Z5, Z5
	VADDPD Z5, Z1, Z1
	VADDPD 64(DI), Z1, Z1
	VMOVUPD Z1, 64(DI)
	VADDPD Z10, Z8, Z8
	VADDPD Z14, Z12, Z12
	VADDPD Z12, Z8, Z8
	VADDPD (R12), Z8, Z8
	VMOVUPD Z8, (R12)
	VADDPD Z11, Z9, Z9
	VADDPD Z15, Z13, Z13
	VADDPD Z13, Z9, Z9
	VADDPD 64(R12), Z9, Z9
	VMOVUPD Z9, 64(R12)
	ADDQ $64, SI
	ADDQ $64, BX
	ADDQ $128, DI
	ADDQ $128, R12
	ADDQ $128, R10
	ADDQ $128, R11
	SUBQ $2, R9
	JMP cgpairs

cgone:
	TESTQ R9, R9
	JZ cgdone
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VMOVUPD (R10), Z16
	VMOVUPD (R11), Z18
	MOVQ SI, AX
	MOVQ BX, R13
	MOVQ R8, CX

cg1loop:
	CMPQ CX, $4
	JLT cg1tail
	VCVTPS2PD (AX), Z20
	VSUBPD Z16, Z20, Z20
	VMULPD Z18, Z20, Z20
	VCVTPS2PD (R13), Z21
	VADDPD Z21, Z0, Z0
	VMULPD Z20, Z21, Z21
	VADDPD Z21, Z4, Z4
	VCVTPS2PD (AX)(DX*1), Z22
	VSUBPD Z16, Z22, Z22
	VMULPD Z18, Z22, Z22
	VCVTPS2PD (R13)(DX*1), Z23
	VADDPD Z23, Z1, Z1
	VMULPD Z22, Z23, Z23
	VADDPD Z23, Z5, Z5
	VCVTPS2PD (AX)(DX*2), Z24
	VSUBPD Z16, Z24, Z24
	VMULPD Z18, Z24, Z24
	VCVTPS2PD (R13)(DX*2), Z25
	VADDPD Z25, Z2, Z2
	VMULPD Z24, Z25, Z25
	VADDPD Z25, Z6, Z6
	VCVTPS2PD (AX)(R14*1), Z26
	VSUBPD Z16, Z26, Z26
	VMULPD Z18, Z26, Z26
	VCVTPS2PD (R13)(R14*1), Z27
	VADDPD Z27, Z3, Z3
	VMULPD Z26, Z27, Z27
	VADDPD Z27, Z7, Z7
	LEAQ (AX)(DX*4), AX
	LEAQ (R13)(DX*4), R13
	SUBQ $4, CX
	JMP cg1loop

cg1tail:
	TESTQ CX, CX
	JZ cg1fold
	VCVTPS2PD (AX), Z20
	VSUBPD Z16, Z20, Z20
	VMULPD Z18, Z20, Z20
	VCVTPS2PD (R13), Z21
	VADDPD Z21, Z0, Z0
	VMULPD Z20, Z21, Z21
	VADDPD Z21, Z4, Z4
	DECQ CX
	JZ cg1fold
	VCVTPS2PD (AX)(DX*1), Z22
	VSUBPD Z16, Z22, Z22
	VMULPD Z18, Z22, Z22
	VCVTPS2PD (R13)(DX*1), Z23
	VADDPD Z23, Z1, Z1
	VMULPD Z22, Z23, Z23
	VADDPD Z23, Z5, Z5
	DECQ CX
	JZ cg1fold
	VCVTPS2PD (AX)(DX*2), Z24
	VSUBPD Z16, Z24, Z24
	VMULPD Z18, Z24, Z24
	VCVTPS2PD (R13)(DX*2), Z25
	VADDPD Z25, Z2, Z2
	VMULPD Z24, Z25, Z25
	VADDPD Z25, Z6, Z6

cg1fold:
	VADDPD Z1, Z0, Z0
	VADDPD Z3, Z2, Z2
	VADDPD Z2, Z0, Z0
	VADDPD (DI), Z0, Z0
	VMOVUPD Z0, (DI)
	VADDPD Z5, Z4, Z4
	VADDPD Z7, Z6, Z6
	VADDPD Z6, Z4, Z4
	VADDPD (R12), Z4, Z4
	VMOVUPD Z4, (R12)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $64, DI
	ADDQ $64, R12
	ADDQ $64, R10
	ADDQ $64, R11
	SUBQ $1, R9
	JMP cgone

cgdone:
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
