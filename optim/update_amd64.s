//go:build amd64 && !purego

#include "textflag.h"

// The update rules of update.go on eight float32 lanes (AVX2), with the
// same operations in the same order as the Go loops (a multiply, then an
// add: never fused), so both give the same bits. n is a multiple of 8.

// func sgdAVX2(w, grad *float32, n int, lr float32)
TEXT ·sgdAVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS lr+24(FP), Y10
	XORQ AX, AX
sgdloop:
	CMPQ AX, CX
	JGE sgddone
	VMOVUPS (SI)(AX*4), Y0
	VMULPS Y10, Y0, Y0
	VMOVUPS (DI)(AX*4), Y1
	VSUBPS Y0, Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP sgdloop
sgddone:
	VZEROUPPER
	RET

// func momentumAVX2(w, grad, vel *float32, n int, lr, mom float32, nesterov bool)
TEXT ·momentumAVX2(SB), NOSPLIT, $0-41
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ vel+16(FP), R8
	MOVQ n+24(FP), CX
	VBROADCASTSS lr+32(FP), Y10
	VBROADCASTSS mom+36(FP), Y11
	MOVBLZX nesterov+40(FP), DX
	XORQ AX, AX
momloop:
	CMPQ AX, CX
	JGE momdone
	VMOVUPS (SI)(AX*4), Y0
	VMULPS Y10, Y0, Y0          // lr·g
	VMOVUPS (R8)(AX*4), Y1
	VMULPS Y11, Y1, Y1          // momentum·v
	VSUBPS Y0, Y1, Y1           // v = momentum·v - lr·g
	VMOVUPS Y1, (R8)(AX*4)
	TESTQ DX, DX
	JZ momplain
	VMULPS Y11, Y1, Y1          // momentum·v
	VSUBPS Y0, Y1, Y1           // momentum·v - lr·g
momplain:
	VMOVUPS (DI)(AX*4), Y2
	VADDPS Y1, Y2, Y2
	VMOVUPS Y2, (DI)(AX*4)
	ADDQ $8, AX
	JMP momloop
momdone:
	VZEROUPPER
	RET

// Adam's moments for 8 weights at AX: m and v updated in place, Y6 =
// lr_t·m / (√v + ε), the step adamAVX2 and adamDecayAVX2 subtract.
#define ADAMSTEP \
	VMOVUPS (SI)(AX*4), Y0; \
	VMOVUPS (R8)(AX*4), Y1; \
	VMULPS Y11, Y1, Y1; \
	VMULPS Y12, Y0, Y2; \
	VADDPS Y2, Y1, Y1; \
	VMOVUPS Y1, (R8)(AX*4); \
	VMOVUPS (R9)(AX*4), Y3; \
	VMULPS Y13, Y3, Y3; \
	VMULPS Y14, Y0, Y4; \
	VMULPS Y0, Y4, Y4; \
	VADDPS Y4, Y3, Y3; \
	VMOVUPS Y3, (R9)(AX*4); \
	VSQRTPS Y3, Y5; \
	VADDPS Y15, Y5, Y5; \
	VMULPS Y10, Y1, Y6; \
	VDIVPS Y5, Y6, Y6

// func adamAVX2(w, grad, m, v *float32, n int, lrT, b1, c1, b2, c2, eps float32)
TEXT ·adamAVX2(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), R8
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS lrT+40(FP), Y10
	VBROADCASTSS b1+44(FP), Y11
	VBROADCASTSS c1+48(FP), Y12
	VBROADCASTSS b2+52(FP), Y13
	VBROADCASTSS c2+56(FP), Y14
	VBROADCASTSS eps+60(FP), Y15
	XORQ AX, AX
adamloop:
	CMPQ AX, CX
	JGE adamdone
	ADAMSTEP                    // β1·m + (1-β1)·g, β2·v + (1-β2)·g·g, lr_t·m / (√v + ε)
	VMOVUPS (DI)(AX*4), Y7
	VSUBPS Y6, Y7, Y7
	VMOVUPS Y7, (DI)(AX*4)
	ADDQ $8, AX
	JMP adamloop
adamdone:
	VZEROUPPER
	RET

// func adamDecayAVX2(w, grad, m, v *float32, n int, lrT, b1, c1, b2, c2, eps, d float32)
// Decoupled weight decay w -= w·d, then Adam: decayAVX2 and adamAVX2 in one
// pass over the weights (AdamW).
TEXT ·adamDecayAVX2(SB), NOSPLIT, $0-68
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), R8
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS lrT+40(FP), Y10
	VBROADCASTSS b1+44(FP), Y11
	VBROADCASTSS c1+48(FP), Y12
	VBROADCASTSS b2+52(FP), Y13
	VBROADCASTSS c2+56(FP), Y14
	VBROADCASTSS eps+60(FP), Y15
	VBROADCASTSS d+64(FP), Y9
	XORQ AX, AX
adamwloop:
	CMPQ AX, CX
	JGE adamwdone
	ADAMSTEP                    // β1·m + (1-β1)·g, β2·v + (1-β2)·g·g, lr_t·m / (√v + ε)
	VMOVUPS (DI)(AX*4), Y7
	VMULPS Y9, Y7, Y8           // w·d
	VSUBPS Y8, Y7, Y7           // w - w·d
	VSUBPS Y6, Y7, Y7
	VMOVUPS Y7, (DI)(AX*4)
	ADDQ $8, AX
	JMP adamwloop
adamwdone:
	VZEROUPPER
	RET

// func rmspropAVX2(w, grad, r *float32, n int, lr, rho, c, eps float32)
// RMSprop without momentum and not centered.
TEXT ·rmspropAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ r+16(FP), R8
	MOVQ n+24(FP), CX
	VBROADCASTSS lr+32(FP), Y10
	VBROADCASTSS rho+36(FP), Y11
	VBROADCASTSS c+40(FP), Y12
	VBROADCASTSS eps+44(FP), Y13
	XORQ AX, AX
rmsloop:
	CMPQ AX, CX
	JGE rmsdone
	VMOVUPS (SI)(AX*4), Y0      // g
	VMOVUPS (R8)(AX*4), Y1
	VMULPS Y11, Y1, Y1          // ρ·r
	VMULPS Y12, Y0, Y2          // (1-ρ)·g
	VMULPS Y0, Y2, Y2           // (1-ρ)·g·g
	VADDPS Y2, Y1, Y1           // r
	VMOVUPS Y1, (R8)(AX*4)
	VADDPS Y13, Y1, Y3          // r + ε
	VSQRTPS Y3, Y3
	VMULPS Y10, Y0, Y4          // lr·g
	VDIVPS Y3, Y4, Y4           // lr·g / √(r + ε)
	VMOVUPS (DI)(AX*4), Y5
	VSUBPS Y4, Y5, Y5
	VMOVUPS Y5, (DI)(AX*4)
	ADDQ $8, AX
	JMP rmsloop
rmsdone:
	VZEROUPPER
	RET

// func adagradAVX2(w, grad, a *float32, n int, lr, eps float32)
TEXT ·adagradAVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ a+16(FP), R8
	MOVQ n+24(FP), CX
	VBROADCASTSS lr+32(FP), Y10
	VBROADCASTSS eps+36(FP), Y13
	XORQ AX, AX
adagradloop:
	CMPQ AX, CX
	JGE adagraddone
	VMOVUPS (SI)(AX*4), Y0      // g
	VMULPS Y0, Y0, Y2           // g·g
	VMOVUPS (R8)(AX*4), Y1
	VADDPS Y2, Y1, Y1           // a
	VMOVUPS Y1, (R8)(AX*4)
	VADDPS Y13, Y1, Y3          // a + ε
	VSQRTPS Y3, Y3
	VMULPS Y10, Y0, Y4          // lr·g
	VDIVPS Y3, Y4, Y4
	VMOVUPS (DI)(AX*4), Y5
	VSUBPS Y4, Y5, Y5
	VMOVUPS Y5, (DI)(AX*4)
	ADDQ $8, AX
	JMP adagradloop
adagraddone:
	VZEROUPPER
	RET

// func adadeltaAVX2(w, grad, a, d *float32, n int, lr, rho, c, eps float32)
TEXT ·adadeltaAVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ a+16(FP), R8
	MOVQ d+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS lr+40(FP), Y10
	VBROADCASTSS rho+44(FP), Y11
	VBROADCASTSS c+48(FP), Y12
	VBROADCASTSS eps+52(FP), Y13
	MOVL $0x80000000, BX
	MOVL BX, X14
	VBROADCASTSS X14, Y14       // the sign bit
	XORQ AX, AX
adadeltaloop:
	CMPQ AX, CX
	JGE adadeltadone
	VMOVUPS (SI)(AX*4), Y0      // g
	VMOVUPS (R8)(AX*4), Y1
	VMULPS Y11, Y1, Y1          // ρ·a
	VMULPS Y12, Y0, Y2          // (1-ρ)·g
	VMULPS Y0, Y2, Y2           // (1-ρ)·g·g
	VADDPS Y2, Y1, Y1           // a
	VMOVUPS Y1, (R8)(AX*4)
	VMOVUPS (R9)(AX*4), Y3      // d
	VADDPS Y13, Y3, Y4          // d + ε
	VSQRTPS Y4, Y4
	VMULPS Y0, Y4, Y4           // √(d + ε)·g
	VXORPS Y14, Y4, Y4          // negated
	VADDPS Y13, Y1, Y5          // a + ε
	VSQRTPS Y5, Y5
	VDIVPS Y5, Y4, Y4           // δ
	VMULPS Y11, Y3, Y3          // ρ·d
	VMULPS Y12, Y4, Y6          // (1-ρ)·δ
	VMULPS Y4, Y6, Y6           // (1-ρ)·δ·δ
	VADDPS Y6, Y3, Y3           // d
	VMOVUPS Y3, (R9)(AX*4)
	VMULPS Y10, Y4, Y4          // lr·δ
	VMOVUPS (DI)(AX*4), Y5
	VADDPS Y4, Y5, Y5
	VMOVUPS Y5, (DI)(AX*4)
	ADDQ $8, AX
	JMP adadeltaloop
adadeltadone:
	VZEROUPPER
	RET

// func nadamAVX2(w, grad, m, v *float32, n int, lr, c1, c2, mCoef, gCoef, vCorr, eps float32)
TEXT ·nadamAVX2(SB), NOSPLIT, $0-68
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), R8
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS lr+40(FP), Y9
	VBROADCASTSS c1+44(FP), Y10
	VBROADCASTSS c2+48(FP), Y11
	VBROADCASTSS mCoef+52(FP), Y12
	VBROADCASTSS gCoef+56(FP), Y13
	VBROADCASTSS vCorr+60(FP), Y14
	VBROADCASTSS eps+64(FP), Y15
	XORQ AX, AX
nadamloop:
	CMPQ AX, CX
	JGE nadamdone
	VMOVUPS (SI)(AX*4), Y0      // g
	VMOVUPS (R8)(AX*4), Y1      // m
	VSUBPS Y1, Y0, Y2           // g - m
	VMULPS Y10, Y2, Y2          // (g - m)·(1-β1)
	VADDPS Y2, Y1, Y1           // m
	VMOVUPS Y1, (R8)(AX*4)
	VMOVUPS (R9)(AX*4), Y3      // v
	VMULPS Y0, Y0, Y4           // g·g
	VSUBPS Y3, Y4, Y4           // g·g - v
	VMULPS Y11, Y4, Y4          // (g·g - v)·(1-β2)
	VADDPS Y4, Y3, Y3           // v
	VMOVUPS Y3, (R9)(AX*4)
	VMULPS Y12, Y1, Y5          // mCoef·m
	VMULPS Y13, Y0, Y6          // gCoef·g
	VADDPS Y6, Y5, Y5           // m̂
	VDIVPS Y14, Y3, Y6          // v̂ = v / (1-β2^t)
	VSQRTPS Y6, Y6
	VADDPS Y15, Y6, Y6          // √v̂ + ε
	VMULPS Y9, Y5, Y5           // lr·m̂
	VDIVPS Y6, Y5, Y5
	VMOVUPS (DI)(AX*4), Y7
	VSUBPS Y5, Y7, Y7
	VMOVUPS Y7, (DI)(AX*4)
	ADDQ $8, AX
	JMP nadamloop
nadamdone:
	VZEROUPPER
	RET

// func decayAVX2(w *float32, n int, d float32)
// Decoupled weight decay: w -= w·d.
TEXT ·decayAVX2(SB), NOSPLIT, $0-20
	MOVQ w+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS d+16(FP), Y10
	XORQ AX, AX
decayloop:
	CMPQ AX, CX
	JGE decaydone
	VMOVUPS (DI)(AX*4), Y0
	VMULPS Y10, Y0, Y1
	VSUBPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP decayloop
decaydone:
	VZEROUPPER
	RET

// func adamaxAVX2(w, grad, m, u *float32, n int, lr, c1, b2, corr, eps float32)
// The maximum keeps Go's NaN rule: NaN when either side is.
TEXT ·adamaxAVX2(SB), NOSPLIT, $0-60
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), R8
	MOVQ u+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS lr+40(FP), Y10
	VBROADCASTSS c1+44(FP), Y11
	VBROADCASTSS b2+48(FP), Y12
	VBROADCASTSS corr+52(FP), Y13
	VBROADCASTSS eps+56(FP), Y14
	MOVL $0x7fffffff, BX
	MOVL BX, X15
	VBROADCASTSS X15, Y15       // all but the sign bit
	XORQ AX, AX
adamaxloop:
	CMPQ AX, CX
	JGE adamaxdone
	VMOVUPS (SI)(AX*4), Y0      // g
	VMOVUPS (R8)(AX*4), Y1      // m
	VSUBPS Y1, Y0, Y2           // g - m
	VMULPS Y11, Y2, Y2          // (g - m)·(1-β1)
	VADDPS Y2, Y1, Y1           // m
	VMOVUPS Y1, (R8)(AX*4)
	VMOVUPS (R9)(AX*4), Y3      // u
	VMULPS Y12, Y3, Y3          // β2·u
	VANDPS Y15, Y0, Y4          // |g|
	VMAXPS Y4, Y3, Y5           // max(β2·u, |g|), but |g| where either is NaN
	VCMPPS $3, Y4, Y3, Y6       // where either is NaN
	VADDPS Y4, Y3, Y7           // a NaN there
	VBLENDVPS Y6, Y7, Y5, Y5
	VMOVUPS Y5, (R9)(AX*4)
	VADDPS Y14, Y5, Y5          // u + ε
	VMULPS Y13, Y5, Y5          // (1-β1^t)·(u + ε)
	VMULPS Y10, Y1, Y6          // lr·m
	VDIVPS Y5, Y6, Y6
	VMOVUPS (DI)(AX*4), Y7
	VSUBPS Y6, Y7, Y7
	VMOVUPS Y7, (DI)(AX*4)
	ADDQ $8, AX
	JMP adamaxloop
adamaxdone:
	VZEROUPPER
	RET
