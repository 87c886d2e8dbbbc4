//go:build amd64 && !purego

#include "textflag.h"

// The gates' constants (gates.go), one float32 each, broadcast into
// Z12-Z31 by GATECONSTS: |x|'s mask, the clamp 104, 1, log2 e, ln 2 in two
// parts, exp's Taylor coefficients 1/7! to 1/2!, the exponent bias 127 (an
// int32), the cut 0.625 between tanh's two formulas and tanh's Q, highest
// degree first. Z11 holds 0.
DATA gateconst<>+0(SB)/4, $0x7fffffff
DATA gateconst<>+4(SB)/4, $0x42d00000
DATA gateconst<>+8(SB)/4, $0x3f800000
DATA gateconst<>+12(SB)/4, $0x3fb8aa3b
DATA gateconst<>+16(SB)/4, $0x3f317218
DATA gateconst<>+20(SB)/4, $0xb102e308
DATA gateconst<>+24(SB)/4, $0x39500d01
DATA gateconst<>+28(SB)/4, $0x3ab60b61
DATA gateconst<>+32(SB)/4, $0x3c088889
DATA gateconst<>+36(SB)/4, $0x3d2aaaab
DATA gateconst<>+40(SB)/4, $0x3e2aaaab
DATA gateconst<>+44(SB)/4, $0x3f000000
DATA gateconst<>+48(SB)/4, $0x0000007f
DATA gateconst<>+52(SB)/4, $0x3f200000
DATA gateconst<>+56(SB)/4, $0x3b0ceaa2
DATA gateconst<>+60(SB)/4, $0xbc061dd3
DATA gateconst<>+64(SB)/4, $0x3cb1cd53
DATA gateconst<>+68(SB)/4, $0xbd5cf809
DATA gateconst<>+72(SB)/4, $0x3e088837
DATA gateconst<>+76(SB)/4, $0xbeaaaaaa
GLOBL gateconst<>(SB), RODATA|NOPTR, $80

#define GATECONSTS \
	VBROADCASTSS gateconst<>+0(SB), Z31 \
	VBROADCASTSS gateconst<>+4(SB), Z30 \
	VBROADCASTSS gateconst<>+8(SB), Z29 \
	VBROADCASTSS gateconst<>+12(SB), Z28 \
	VBROADCASTSS gateconst<>+16(SB), Z27 \
	VBROADCASTSS gateconst<>+20(SB), Z26 \
	VBROADCASTSS gateconst<>+24(SB), Z25 \
	VBROADCASTSS gateconst<>+28(SB), Z24 \
	VBROADCASTSS gateconst<>+32(SB), Z23 \
	VBROADCASTSS gateconst<>+36(SB), Z22 \
	VBROADCASTSS gateconst<>+40(SB), Z21 \
	VBROADCASTSS gateconst<>+44(SB), Z20 \
	VBROADCASTSS gateconst<>+48(SB), Z19 \
	VBROADCASTSS gateconst<>+52(SB), Z18 \
	VBROADCASTSS gateconst<>+56(SB), Z17 \
	VBROADCASTSS gateconst<>+60(SB), Z16 \
	VBROADCASTSS gateconst<>+64(SB), Z15 \
	VBROADCASTSS gateconst<>+68(SB), Z14 \
	VBROADCASTSS gateconst<>+72(SB), Z13 \
	VBROADCASTSS gateconst<>+76(SB), Z12 \
	VPXORD Z11, Z11, Z11

// EXPNEG16 sets e to exp(u) for u in [-104, 0] (package avx2's expNeg); u,
// t1 and t2 are overwritten.
#define EXPNEG16(u, e, t1, t2) \
	VMULPS Z28, u, t1; \
	VCVTPS2DQ t1, t2; \
	VCVTDQ2PS t2, t1; \
	VFNMADD231PS Z27, t1, u; \
	VFNMADD231PS Z26, t1, u; \
	VMOVAPS Z25, e; \
	VFMADD213PS Z24, u, e; \
	VFMADD213PS Z23, u, e; \
	VFMADD213PS Z22, u, e; \
	VFMADD213PS Z21, u, e; \
	VFMADD213PS Z20, u, e; \
	VFMADD213PS Z29, u, e; \
	VFMADD213PS Z29, u, e; \
	VPSRAD $1, t2, t1; \
	VPSUBD t1, t2, t2; \
	VPADDD Z19, t1, t1; \
	VPSLLD $23, t1, t1; \
	VPADDD Z19, t2, t2; \
	VPSLLD $23, t2, t2; \
	VMULPS t2, e, e; \
	VMULPS t1, e, e

// func sigmoid16(x, y *float32, n int)
//
// y[i] = sigmoid(x[i]) for i < n, a multiple of 16: package avx2's
// formula and rounding, 16 lanes at a time.
TEXT ·sigmoid16(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   sigmoid16done
	GATECONSTS

sigmoid16loop:
	VMOVUPS (SI), Z0
	VPANDD  Z31, Z0, Z1
	VMINPS  Z30, Z1, Z1
	VSUBPS  Z1, Z11, Z1            // u = -min(|x|, 104)
	EXPNEG16(Z1, Z2, Z3, Z4)       // e
	VADDPS  Z29, Z2, Z3     // 1 + e
	VCMPPS  $0x1d, Z11, Z0, K1     // x >= 0
	VMOVAPS Z29, K1, Z2     // 1 there, e elsewhere
	VDIVPS  Z3, Z2, Z2
	VCMPPS  $0x03, Z0, Z0, K2      // NaN
	VMOVAPS Z0, K2, Z2
	VMOVUPS Z2, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     sigmoid16loop

sigmoid16done:
	VZEROUPPER
	RET

// func tanh16(x, y *float32, n int)
//
// y[i] = tanh(x[i]) for i < n, a multiple of 16: package avx2's formula
// and rounding, 16 lanes at a time.
TEXT ·tanh16(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   tanh16done
	GATECONSTS

tanh16loop:
	VMOVUPS (SI), Z0
	VPANDD  Z31, Z0, Z1 // a = |x|
	VADDPS  Z1, Z1, Z2
	VMINPS  Z30, Z2, Z2
	VSUBPS  Z2, Z11, Z2            // u = -min(2a, 104)
	EXPNEG16(Z2, Z3, Z4, Z5)       // e
	VSUBPS  Z3, Z29, Z4     // 1 - e
	VADDPS  Z29, Z3, Z3     // 1 + e
	VDIVPS  Z3, Z4, Z4             // large a's tanh
	VMULPS  Z1, Z1, Z5             // s = a²
	VMOVAPS Z17, Z6
	VFMADD213PS Z16, Z5, Z6
	VFMADD213PS Z15, Z5, Z6
	VFMADD213PS Z14, Z5, Z6
	VFMADD213PS Z13, Z5, Z6
	VFMADD213PS Z12, Z5, Z6  // Q(s)
	VMULPS  Z5, Z1, Z7             // a·s
	VFMADD213PS Z1, Z7, Z6         // small a's tanh: a + a·s·Q(s)
	VCMPPS  $0x11, Z18, Z1, K1 // a < 0.625
	VMOVAPS Z6, K1, Z4
	VPANDND Z0, Z31, Z5 // x's sign
	VPORD   Z5, Z4, Z4
	VCMPPS  $0x03, Z0, Z0, K2      // NaN
	VMOVAPS Z0, K2, Z4
	VMOVUPS Z4, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     tanh16loop

tanh16done:
	VZEROUPPER
	RET

// func sigmoidGrad16(y, dy, dx *float32, n int)
//
// dx[i] = dy[i]·y[i]·(1-y[i]) for i < n, a multiple of 16, rounded as Go
// rounds that expression.
TEXT ·sigmoidGrad16(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ dx+16(FP), DI
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   sigmoidgrad16done
	VBROADCASTSS gateconst<>+8(SB), Z14

sigmoidgrad16loop:
	VMOVUPS (SI), Z0
	VMOVUPS (DX), Z1
	VMULPS  Z0, Z1, Z1
	VSUBPS  Z0, Z14, Z2
	VMULPS  Z2, Z1, Z1
	VMOVUPS Z1, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     sigmoidgrad16loop

sigmoidgrad16done:
	VZEROUPPER
	RET

// func tanhGrad16(y, dy, dx *float32, n int)
//
// dx[i] = dy[i]·(1-y[i]·y[i]) for i < n, a multiple of 16, rounded as Go
// rounds that expression.
TEXT ·tanhGrad16(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ dx+16(FP), DI
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   tanhgrad16done
	VBROADCASTSS gateconst<>+8(SB), Z14

tanhgrad16loop:
	VMOVUPS (SI), Z0
	VMOVUPS (DX), Z1
	VMULPS  Z0, Z0, Z2
	VSUBPS  Z2, Z14, Z2
	VMULPS  Z2, Z1, Z1
	VMOVUPS Z1, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     tanhgrad16loop

tanhgrad16done:
	VZEROUPPER
	RET

// The softmax's steps (softmax.go; package avx2's softmax.go defines
// them).

// func maxOf16(x *float32, n int) float32
//
// The largest of x[i], i < n, a multiple of 16 (at least 16).
TEXT ·maxOf16(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $4, CX
	VMOVUPS (SI), Z0

maxof16loop:
	VMAXPS  (SI), Z0, Z0
	ADDQ    $64, SI
	DECQ    CX
	JNZ     maxof16loop
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS  Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS  X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS  X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS  X1, X0, X0
	VZEROUPPER
	MOVSS   X0, ret+16(FP)
	RET

// func expChains16(x, y *float32, n int, m float32, sums *float32)
//
// y[i] = exp(-min(m-x[i], 104)) and sums[i%16] += y[i] for i < n, a
// multiple of 16 (Z9 holds the sums). The minimum keeps a NaN difference
// (its second source).
TEXT ·expChains16(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Z10
	MOVQ sums+32(FP), DX
	SHRQ $4, CX
	JZ   expchains16done
	GATECONSTS
	VMOVUPS (DX), Z9

expchains16loop:
	VSUBPS  (SI), Z10, Z0          // m - x
	VMINPS  Z0, Z30, Z0            // min(104, m - x), NaN kept
	VSUBPS  Z0, Z11, Z0            // u = 0 - that
	EXPNEG16(Z0, Z1, Z2, Z3)
	VMOVUPS Z1, (DI)
	VADDPS  Z1, Z9, Z9
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     expchains16loop
	VMOVUPS Z9, (DX)

expchains16done:
	VZEROUPPER
	RET

// func dotChains16(a, b *float32, n int, sums *float32)
//
// sums[i%16] += a[i]·b[i] for i < n, a multiple of 16, the product
// rounded, then the sum.
TEXT ·dotChains16(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ sums+24(FP), DX
	SHRQ $4, CX
	JZ   dotchains16done
	VMOVUPS (DX), Z9

dotchains16loop:
	VMOVUPS (SI), Z0
	VMULPS  (DI), Z0, Z0
	VADDPS  Z0, Z9, Z9
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     dotchains16loop
	VMOVUPS Z9, (DX)

dotchains16done:
	VZEROUPPER
	RET

// func scaleBy16(y *float32, n int, s float32)
//
// y[i] = y[i]·s for i < n, a multiple of 16.
TEXT ·scaleBy16(SB), NOSPLIT, $0-20
	MOVQ y+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS s+16(FP), Z1
	SHRQ $4, CX
	JZ   scaleby16done

scaleby16loop:
	VMULPS  (DI), Z1, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	DECQ    CX
	JNZ     scaleby16loop

scaleby16done:
	VZEROUPPER
	RET

// func softmaxGrad16(y, dy, dx *float32, n int, s float32)
//
// dx[i] = y[i]·(dy[i] - s) for i < n, a multiple of 16, each operation
// rounded.
TEXT ·softmaxGrad16(SB), NOSPLIT, $0-36
	MOVQ y+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ dx+16(FP), DI
	MOVQ n+24(FP), CX
	VBROADCASTSS s+32(FP), Z2
	SHRQ $4, CX
	JZ   softmaxgrad16done

softmaxgrad16loop:
	VMOVUPS (DX), Z0
	VSUBPS  Z2, Z0, Z0
	VMULPS  (SI), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     softmaxgrad16loop

softmaxgrad16done:
	VZEROUPPER
	RET
