//go:build amd64 && !purego

#include "textflag.h"

// layerNormRowsAVX2 is layerNormRows for CPUs with AVX2 but not AVX-512:
// the same operations in the same order, a group of 8 columns in two
// 4-value halves (lanes 0-3 and 4-7), one row at a time (16 YMM registers).
//
// Registers: SI the row of x, BX the row of dy or beta widened, R10 gamma
// widened, DI the row of out, R13 the row widened, R12 sum, R8 the rows
// left, R9 the groups of 8 columns, DX a row's bytes, AX the column, CX
// the groups left, X13 n, X14 1, X15 eps, Y2 the row's mean, Y3 its rstd,
// Y8 to Y10 scratch.

// HSUM2 adds the lanes of a (0-3) and b (4-7) into the low lane of xa (a's
// X name) as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
#define HSUM2(a, b, xa) \
	VADDPD       b, a, a; \
	VEXTRACTF128 $1, a, X8; \
	VADDPD       X8, xa, xa; \
	VPERMILPD    $1, xa, X8; \
	VADDSD       X8, xa, xa

// MEAN2 sets m to the lanes of a and b added, divided by n, in every lane.
#define MEAN2(a, b, xa, m) \
	HSUM2(a, b, xa); \
	VDIVSD       X13, xa, xa; \
	VBROADCASTSD xa, m

// COLS2 starts a pass over the columns.
#define COLS2 \
	XORQ AX, AX; \
	MOVQ R9, CX

// NEXT2 moves to the next 8 columns; jumps to l while there are more.
#define NEXT2(l) \
	ADDQ $8, AX; \
	DECQ CX; \
	JNZ  l

// MOMENTS sets Y2 and Y3 to the mean and rstd of row SI, storing it
// widened at R13.
#define MOMENTS(l1, l2) \
	VXORPD    Y0, Y0, Y0; \
	VXORPD    Y1, Y1, Y1; \
	COLS2; \
l1:; \
	VCVTPS2PD (SI)(AX*4), Y9; \
	VCVTPS2PD 16(SI)(AX*4), Y10; \
	VMOVUPD   Y9, (R13)(AX*8); \
	VMOVUPD   Y10, 32(R13)(AX*8); \
	VADDPD    Y9, Y0, Y0; \
	VADDPD    Y10, Y1, Y1; \
	NEXT2(l1); \
	MEAN2(Y0, Y1, X0, Y2); \
	VXORPD    Y0, Y0, Y0; \
	VXORPD    Y1, Y1, Y1; \
	COLS2; \
l2:; \
	VMOVUPD   (R13)(AX*8), Y9; \
	VSUBPD    Y2, Y9, Y9; \
	VMULPD    Y9, Y9, Y9; \
	VADDPD    Y9, Y0, Y0; \
	VMOVUPD   32(R13)(AX*8), Y10; \
	VSUBPD    Y2, Y10, Y10; \
	VMULPD    Y10, Y10, Y10; \
	VADDPD    Y10, Y1, Y1; \
	NEXT2(l2); \
	HSUM2(Y0, Y1, X0); \
	VDIVSD       X13, X0, X0; \
	VADDSD       X15, X0, X0; \
	VSQRTSD      X0, X0, X0; \
	VDIVSD       X0, X14, X0; \
	VBROADCASTSD X0, Y3

// FWD4 writes float32(((gamma·(x-m))·r) + beta) for the 4 values fo bytes
// (do bytes widened) into the group.
#define FWD4(fo, do) \
	VMOVUPD    do(R13)(AX*8), Y9; \
	VSUBPD     Y2, Y9, Y9; \
	VMULPD     do(R10)(AX*8), Y9, Y9; \
	VMULPD     Y3, Y9, Y9; \
	VADDPD     do(BX)(AX*8), Y9, Y9; \
	VCVTPD2PSY Y9, X9; \
	VMOVUPS    X9, fo(DI)(AX*4)

// GSUM4 adds g = gamma·dy to sg and (g·(x-m))·r to sgx for 4 values.
#define GSUM4(fo, do, sg, sgx) \
	VCVTPS2PD fo(BX)(AX*4), Y10; \
	VMULPD    do(R10)(AX*8), Y10, Y10; \
	VADDPD    Y10, sg, sg; \
	VMOVUPD   do(R13)(AX*8), Y9; \
	VSUBPD    Y2, Y9, Y9; \
	VMULPD    Y9, Y10, Y9; \
	VMULPD    Y3, Y9, Y9; \
	VADDPD    Y9, sgx, sgx

// GOUT4 writes float32(r·(g - (mg + ((x-m)·r)·mgx))) for 4 values, mg in
// Y4 and mgx in Y6.
#define GOUT4(fo, do) \
	VMOVUPD    do(R13)(AX*8), Y9; \
	VSUBPD     Y2, Y9, Y9; \
	VMULPD     Y3, Y9, Y9; \
	VMULPD     Y6, Y9, Y9; \
	VADDPD     Y9, Y4, Y9; \
	VCVTPS2PD  fo(BX)(AX*4), Y10; \
	VMULPD     do(R10)(AX*8), Y10, Y10; \
	VSUBPD     Y9, Y10, Y10; \
	VMULPD     Y3, Y10, Y10; \
	VCVTPD2PSY Y10, X10; \
	VMOVUPS    X10, fo(DI)(AX*4)

// GAMMA4 adds (dy·(x-m))·r to sum for 4 values.
#define GAMMA4(fo, do) \
	VMOVUPD   do(R13)(AX*8), Y9; \
	VSUBPD    Y2, Y9, Y9; \
	VCVTPS2PD fo(BX)(AX*4), Y10; \
	VMULPD    Y9, Y10, Y9; \
	VMULPD    Y3, Y9, Y9; \
	VADDPD    do(R12)(AX*8), Y9, Y9; \
	VMOVUPD   Y9, do(R12)(AX*8)

// func layerNormRowsAVX2(a *lnArgs)
TEXT ·layerNormRowsAVX2(SB), NOSPLIT, $0-8
	MOVQ   a+0(FP), R14
	MOVQ   0(R14), SI
	MOVQ   16(R14), BX
	MOVQ   24(R14), DI
	MOVQ   32(R14), R12
	MOVQ   40(R14), R8
	MOVQ   48(R14), R9
	VMOVSD 56(R14), X15
	VMOVSD 64(R14), X13
	MOVQ   72(R14), R11
	MOVQ   80(R14), R13
	MOVQ   R9, DX
	SHLQ   $5, DX
	LEAQ   (R13)(DX*4), R10 // gamma widened, after two rows
	MOVQ   $0x3FF0000000000000, AX
	VMOVQ  AX, X14
	TESTQ  R8, R8
	JZ     avdone
	TESTQ  R9, R9
	JZ     avdone
	CMPQ   R11, $1
	JEQ    avgrad
	JGT    avgamma
	LEAQ   (R10)(DX*2), BX  // beta widened

avfwd:
	MOMENTS(avf1, avf2)
	COLS2

avfo:
	FWD4(0, 0)
	FWD4(16, 32)
	NEXT2(avfo)
	ADDQ DX, SI
	ADDQ DX, DI
	DECQ R8
	JNZ  avfwd
	JMP  avdone

avgrad:
	MOMENTS(avg1, avg2)
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	COLS2

avgs:
	GSUM4(0, 0, Y4, Y6)
	GSUM4(16, 32, Y5, Y7)
	NEXT2(avgs)
	MEAN2(Y4, Y5, X4, Y4)
	MEAN2(Y6, Y7, X6, Y6)
	COLS2

avgo:
	GOUT4(0, 0)
	GOUT4(16, 32)
	NEXT2(avgo)
	ADDQ DX, SI
	ADDQ DX, BX
	ADDQ DX, DI
	DECQ R8
	JNZ  avgrad
	JMP  avdone

avgamma:
	MOMENTS(avm1, avm2)
	COLS2

avmo:
	GAMMA4(0, 0)
	GAMMA4(16, 32)
	NEXT2(avmo)
	ADDQ DX, SI
	ADDQ DX, BX
	DECQ R8
	JNZ  avgamma

avdone:
	VZEROUPPER
	RET
