//go:build amd64 && !purego

#include "textflag.h"

// The layer-normalization kernels (layernorm.go gives the arithmetic and
// its order): 8 columns a vector, widened to float64, two rows at a time
// where there are two, so that one row's chain of additions runs while
// the other's waits. The first pass over a row keeps it widened in the
// scratch, where the later passes read it.
//
// Registers: SI the row of x (R15 the second row's), BX the row of dy (R14
// the second row's) or beta widened, R10 gamma widened, DI the row of out
// (R11 the second row's), R13 the row widened (R12 the second row's, R11
// for the gamma gradient), R12 sum, R8 the rows left, R9 the groups of 8
// columns, DX a row's bytes, AX the column, CX the groups left, X13 n,
// X14 1, X15 eps, Z8 scratch; Z2 and Z3 a row's mean and rstd (Z6 and Z7
// the second row's).

// HSUM adds the 8 lanes of z into the low lane of x (z's Y and X names y
// and x) as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
#define HSUM(z, y, x) \
	VEXTRACTF64X4 $1, z, Y8; \
	VADDPD        Y8, y, y; \
	VEXTRACTF128  $1, y, X8; \
	VADDPD        X8, x, x; \
	VPERMILPD     $1, x, X8; \
	VADDSD        X8, x, x

// MEAN sets m to the lanes of acc added, divided by n, in every lane.
#define MEAN(acc, y, x, m) \
	HSUM(acc, y, x); \
	VDIVSD       X13, x, x; \
	VBROADCASTSD x, m

// RSTD sets r to 1/√(the lanes of acc added, divided by n, + eps).
#define RSTD(acc, y, x, r) \
	HSUM(acc, y, x); \
	VDIVSD       X13, x, x; \
	VADDSD       X15, x, x; \
	VSQRTSD      x, x, x; \
	VDIVSD       x, X14, x; \
	VBROADCASTSD x, r

// SUM8W adds the 8 values of row xr at column AX to the lanes of acc and
// stores them widened at the same column of wr.
#define SUM8W(xr, wr, acc, t) \
	VCVTPS2PD (xr)(AX*4), t; \
	VMOVUPD   t, (wr)(AX*8); \
	VADDPD    t, acc, acc

// SQ8W adds (x-m)·(x-m) of the 8 values of the widened row wr at column
// AX to acc.
#define SQ8W(wr, m, acc, t) \
	VMOVUPD (wr)(AX*8), t; \
	VSUBPD  m, t, t; \
	VMULPD  t, t, t; \
	VADDPD  t, acc, acc

// FWD8W writes float32(((gamma·(x-m))·r) + beta) at column AX, x from the
// widened row wr, gamma and beta widened at R10 and BX.
#define FWD8W(wr, outr, m, r) \
	VMOVUPD   (wr)(AX*8), Z20; \
	VSUBPD    m, Z20, Z20; \
	VMULPD    (R10)(AX*8), Z20, Z20; \
	VMULPD    r, Z20, Z20; \
	VADDPD    (BX)(AX*8), Z20, Z20; \
	VCVTPD2PS Z20, Y20; \
	VMOVUPS   Y20, (outr)(AX*4)

// GSUM8W adds g = gamma·dy to sg and (g·(x-m))·r to sgx at column AX, x
// from the widened row wr, gamma widened at R10.
#define GSUM8W(wr, dyr, m, r, sg, sgx, t0, t1) \
	VCVTPS2PD (dyr)(AX*4), t1; \
	VMULPD    (R10)(AX*8), t1, t1; \
	VADDPD    t1, sg, sg; \
	VMOVUPD   (wr)(AX*8), t0; \
	VSUBPD    m, t0, t0; \
	VMULPD    t0, t1, t0; \
	VMULPD    r, t0, t0; \
	VADDPD    t0, sgx, sgx

// GOUT8W writes float32(r·(g - (mg + ((x-m)·r)·mgx))) at column AX, mg
// and mgx (the sums divided by n) in every lane, x from the widened row
// wr, gamma widened at R10.
#define GOUT8W(wr, dyr, outr, m, r, mg, mgx) \
	VMOVUPD   (wr)(AX*8), Z20; \
	VSUBPD    m, Z20, Z20; \
	VMULPD    r, Z20, Z20; \
	VMULPD    mgx, Z20, Z20; \
	VADDPD    Z20, mg, Z20; \
	VCVTPS2PD (dyr)(AX*4), Z21; \
	VMULPD    (R10)(AX*8), Z21, Z21; \
	VSUBPD    Z20, Z21, Z21; \
	VMULPD    r, Z21, Z21; \
	VCVTPD2PS Z21, Y21; \
	VMOVUPS   Y21, (outr)(AX*4)

// GAMMA8W sets t0 to (dy·(x-m))·r at column AX, x from the widened row wr.
#define GAMMA8W(wr, dyr, m, r, t0, t1) \
	VMOVUPD   (wr)(AX*8), t0; \
	VSUBPD    m, t0, t0; \
	VCVTPS2PD (dyr)(AX*4), t1; \
	VMULPD    t0, t1, t0; \
	VMULPD    r, t0, t0

// MOMENTS2W sets Z2, Z3 and Z6, Z7 to the mean and rstd of rows SI and
// R15, storing them widened at wa and wb.
#define MOMENTS2W(l1, l2, wa, wb) \
	VPXORQ Z0, Z0, Z0; \
	VPXORQ Z4, Z4, Z4; \
	COLS; \
l1:; \
	SUM8W(SI, wa, Z0, Z20); \
	SUM8W(R15, wb, Z4, Z21); \
	NEXT8(l1); \
	MEAN(Z0, Y0, X0, Z2); \
	MEAN(Z4, Y4, X4, Z6); \
	VPXORQ Z1, Z1, Z1; \
	VPXORQ Z5, Z5, Z5; \
	COLS; \
l2:; \
	SQ8W(wa, Z2, Z1, Z20); \
	SQ8W(wb, Z6, Z5, Z21); \
	NEXT8(l2); \
	RSTD(Z1, Y1, X1, Z3); \
	RSTD(Z5, Y5, X5, Z7)

// MOMENTS1W sets Z2 and Z3 to the mean and rstd of row SI, storing it
// widened at R13.
#define MOMENTS1W(l1, l2) \
	VPXORQ Z0, Z0, Z0; \
	COLS; \
l1:; \
	SUM8W(SI, R13, Z0, Z20); \
	NEXT8(l1); \
	MEAN(Z0, Y0, X0, Z2); \
	VPXORQ Z1, Z1, Z1; \
	COLS; \
l2:; \
	SQ8W(R13, Z2, Z1, Z20); \
	NEXT8(l2); \
	RSTD(Z1, Y1, X1, Z3)

// COLS starts a pass over the columns.
#define COLS \
	XORQ AX, AX; \
	MOVQ R9, CX

// NEXT8 moves to the next 8 columns; jumps to l while there are more.
#define NEXT8(l) \
	ADDQ $8, AX; \
	DECQ CX; \
	JNZ  l

// func layerNormRows(a *lnArgs)
TEXT ·layerNormRows(SB), NOSPLIT, $0-8
	MOVQ         a+0(FP), R14
	MOVQ         0(R14), SI
	MOVQ         8(R14), R10
	MOVQ         16(R14), BX
	MOVQ         24(R14), DI
	MOVQ         32(R14), R12
	MOVQ         40(R14), R8
	MOVQ         48(R14), R9
	VMOVSD       56(R14), X15
	VBROADCASTSD 64(R14), Z13
	MOVQ         72(R14), R11
	MOVQ         R9, DX
	SHLQ         $5, DX
	MOVQ         $0x3FF0000000000000, AX
	VMOVQ        AX, X14
	TESTQ        R8, R8
	JZ           lndone
	TESTQ        R9, R9
	JZ           lndone
	MOVQ         80(R14), R13      // the widened rows, 2·DX bytes each
	CMPQ         R11, $1
	JEQ          gradstart
	JGT          gammastart
	LEAQ         (R13)(DX*2), R12
	LEAQ         (R12)(DX*2), R10  // gamma widened
	LEAQ         (R10)(DX*2), BX   // beta widened

fwdpair:
	CMPQ R8, $2
	JLT  fwdone
	LEAQ (SI)(DX*1), R15
	LEAQ (DI)(DX*1), R11
	MOMENTS2W(fwm1, fwm2, R13, R12)
	COLS

fwa:
	FWD8W(R13, DI, Z2, Z3)
	NEXT8(fwa)
	COLS

fwb:
	FWD8W(R12, R11, Z6, Z7)
	NEXT8(fwb)
	LEAQ (SI)(DX*2), SI
	LEAQ (DI)(DX*2), DI
	SUBQ $2, R8
	JMP  fwdpair

fwdone:
	TESTQ R8, R8
	JZ    lndone
	MOMENTS1W(fws1, fws2)
	COLS

fwo:
	FWD8W(R13, DI, Z2, Z3)
	NEXT8(fwo)
	JMP lndone

gradstart:
	LEAQ (R13)(DX*2), R12
	LEAQ (R12)(DX*2), R10 // gamma widened

gradpair:
	CMPQ R8, $2
	JLT  gradone
	LEAQ (SI)(DX*1), R15
	LEAQ (BX)(DX*1), R14
	LEAQ (DI)(DX*1), R11
	MOMENTS2W(grm1, grm2, R13, R12)
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	COLS

grs:
	GSUM8W(R13, BX, Z2, Z3, Z9, Z10, Z20, Z21)
	GSUM8W(R12, R14, Z6, Z7, Z11, Z12, Z23, Z24)
	NEXT8(grs)
	MEAN(Z9, Y9, X9, Z9)
	MEAN(Z10, Y10, X10, Z10)
	MEAN(Z11, Y11, X11, Z11)
	MEAN(Z12, Y12, X12, Z12)
	COLS

gra:
	GOUT8W(R13, BX, DI, Z2, Z3, Z9, Z10)
	NEXT8(gra)
	COLS

grb:
	GOUT8W(R12, R14, R11, Z6, Z7, Z11, Z12)
	NEXT8(grb)
	LEAQ (SI)(DX*2), SI
	LEAQ (BX)(DX*2), BX
	LEAQ (DI)(DX*2), DI
	SUBQ $2, R8
	JMP  gradpair

gradone:
	TESTQ R8, R8
	JZ    lndone
	MOMENTS1W(grs1, grs2)
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	COLS

gros:
	GSUM8W(R13, BX, Z2, Z3, Z9, Z10, Z20, Z21)
	NEXT8(gros)
	MEAN(Z9, Y9, X9, Z9)
	MEAN(Z10, Y10, X10, Z10)
	COLS

groo:
	GOUT8W(R13, BX, DI, Z2, Z3, Z9, Z10)
	NEXT8(groo)
	JMP lndone

gammastart:
	LEAQ (R13)(DX*2), R11 // the second widened row (R12 is sum)

gammapair:
	CMPQ R8, $2
	JLT  gammaone
	LEAQ (SI)(DX*1), R15
	LEAQ (BX)(DX*1), R14
	MOMENTS2W(gam1, gam2, R13, R11)
	COLS

gab:
	GAMMA8W(R13, BX, Z2, Z3, Z20, Z21)
	GAMMA8W(R11, R14, Z6, Z7, Z23, Z24)
	VADDPD  (R12)(AX*8), Z20, Z20
	VADDPD  Z23, Z20, Z20
	VMOVUPD Z20, (R12)(AX*8)
	NEXT8(gab)
	LEAQ (SI)(DX*2), SI
	LEAQ (BX)(DX*2), BX
	SUBQ $2, R8
	JMP  gammapair

gammaone:
	TESTQ R8, R8
	JZ    lndone
	MOMENTS1W(gas1, gas2)
	COLS

gao:
	GAMMA8W(R13, BX, Z2, Z3, Z20, Z21)
	VADDPD  (R12)(AX*8), Z20, Z20
	VMOVUPD Z20, (R12)(AX*8)
	NEXT8(gao)

lndone:
	VZEROUPPER
	RET
