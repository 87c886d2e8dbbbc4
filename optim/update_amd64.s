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
	VMOVUPS (SI)(AX*4), Y0      // g
	VMOVUPS (R8)(AX*4), Y1
	VMULPS Y11, Y1, Y1          // β1·m
	VMULPS Y12, Y0, Y2          // (1-β1)·g
	VADDPS Y2, Y1, Y1           // m
	VMOVUPS Y1, (R8)(AX*4)
	VMOVUPS (R9)(AX*4), Y3
	VMULPS Y13, Y3, Y3          // β2·v
	VMULPS Y14, Y0, Y4          // (1-β2)·g
	VMULPS Y0, Y4, Y4           // (1-β2)·g·g
	VADDPS Y4, Y3, Y3           // v
	VMOVUPS Y3, (R9)(AX*4)
	VSQRTPS Y3, Y5
	VADDPS Y15, Y5, Y5          // √v + ε
	VMULPS Y10, Y1, Y6          // lr_t·m
	VDIVPS Y5, Y6, Y6           // lr_t·m / (√v + ε)
	VMOVUPS (DI)(AX*4), Y7
	VSUBPS Y6, Y7, Y7
	VMOVUPS Y7, (DI)(AX*4)
	ADDQ $8, AX
	JMP adamloop
adamdone:
	VZEROUPPER
	RET
