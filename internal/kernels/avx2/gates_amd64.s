//go:build amd64 && !purego

#include "textflag.h"

// The gates' constants (gates.go), each in the 8 lanes of a YMM operand:
// |x|'s mask, the clamp 104, 1, log2 e, ln 2 in two parts, exp's Taylor
// coefficients 1/7! to 1/2!, the exponent bias 127 (an int32), the cut
// 0.625 between tanh's two formulas and tanh's Q, highest degree first.
DATA gateconst<>+0(SB)/4, $0x7fffffff
DATA gateconst<>+4(SB)/4, $0x7fffffff
DATA gateconst<>+8(SB)/4, $0x7fffffff
DATA gateconst<>+12(SB)/4, $0x7fffffff
DATA gateconst<>+16(SB)/4, $0x7fffffff
DATA gateconst<>+20(SB)/4, $0x7fffffff
DATA gateconst<>+24(SB)/4, $0x7fffffff
DATA gateconst<>+28(SB)/4, $0x7fffffff
DATA gateconst<>+32(SB)/4, $0x42d00000
DATA gateconst<>+36(SB)/4, $0x42d00000
DATA gateconst<>+40(SB)/4, $0x42d00000
DATA gateconst<>+44(SB)/4, $0x42d00000
DATA gateconst<>+48(SB)/4, $0x42d00000
DATA gateconst<>+52(SB)/4, $0x42d00000
DATA gateconst<>+56(SB)/4, $0x42d00000
DATA gateconst<>+60(SB)/4, $0x42d00000
DATA gateconst<>+64(SB)/4, $0x3f800000
DATA gateconst<>+68(SB)/4, $0x3f800000
DATA gateconst<>+72(SB)/4, $0x3f800000
DATA gateconst<>+76(SB)/4, $0x3f800000
DATA gateconst<>+80(SB)/4, $0x3f800000
DATA gateconst<>+84(SB)/4, $0x3f800000
DATA gateconst<>+88(SB)/4, $0x3f800000
DATA gateconst<>+92(SB)/4, $0x3f800000
DATA gateconst<>+96(SB)/4, $0x3fb8aa3b
DATA gateconst<>+100(SB)/4, $0x3fb8aa3b
DATA gateconst<>+104(SB)/4, $0x3fb8aa3b
DATA gateconst<>+108(SB)/4, $0x3fb8aa3b
DATA gateconst<>+112(SB)/4, $0x3fb8aa3b
DATA gateconst<>+116(SB)/4, $0x3fb8aa3b
DATA gateconst<>+120(SB)/4, $0x3fb8aa3b
DATA gateconst<>+124(SB)/4, $0x3fb8aa3b
DATA gateconst<>+128(SB)/4, $0x3f317218
DATA gateconst<>+132(SB)/4, $0x3f317218
DATA gateconst<>+136(SB)/4, $0x3f317218
DATA gateconst<>+140(SB)/4, $0x3f317218
DATA gateconst<>+144(SB)/4, $0x3f317218
DATA gateconst<>+148(SB)/4, $0x3f317218
DATA gateconst<>+152(SB)/4, $0x3f317218
DATA gateconst<>+156(SB)/4, $0x3f317218
DATA gateconst<>+160(SB)/4, $0xb102e308
DATA gateconst<>+164(SB)/4, $0xb102e308
DATA gateconst<>+168(SB)/4, $0xb102e308
DATA gateconst<>+172(SB)/4, $0xb102e308
DATA gateconst<>+176(SB)/4, $0xb102e308
DATA gateconst<>+180(SB)/4, $0xb102e308
DATA gateconst<>+184(SB)/4, $0xb102e308
DATA gateconst<>+188(SB)/4, $0xb102e308
DATA gateconst<>+192(SB)/4, $0x39500d01
DATA gateconst<>+196(SB)/4, $0x39500d01
DATA gateconst<>+200(SB)/4, $0x39500d01
DATA gateconst<>+204(SB)/4, $0x39500d01
DATA gateconst<>+208(SB)/4, $0x39500d01
DATA gateconst<>+212(SB)/4, $0x39500d01
DATA gateconst<>+216(SB)/4, $0x39500d01
DATA gateconst<>+220(SB)/4, $0x39500d01
DATA gateconst<>+224(SB)/4, $0x3ab60b61
DATA gateconst<>+228(SB)/4, $0x3ab60b61
DATA gateconst<>+232(SB)/4, $0x3ab60b61
DATA gateconst<>+236(SB)/4, $0x3ab60b61
DATA gateconst<>+240(SB)/4, $0x3ab60b61
DATA gateconst<>+244(SB)/4, $0x3ab60b61
DATA gateconst<>+248(SB)/4, $0x3ab60b61
DATA gateconst<>+252(SB)/4, $0x3ab60b61
DATA gateconst<>+256(SB)/4, $0x3c088889
DATA gateconst<>+260(SB)/4, $0x3c088889
DATA gateconst<>+264(SB)/4, $0x3c088889
DATA gateconst<>+268(SB)/4, $0x3c088889
DATA gateconst<>+272(SB)/4, $0x3c088889
DATA gateconst<>+276(SB)/4, $0x3c088889
DATA gateconst<>+280(SB)/4, $0x3c088889
DATA gateconst<>+284(SB)/4, $0x3c088889
DATA gateconst<>+288(SB)/4, $0x3d2aaaab
DATA gateconst<>+292(SB)/4, $0x3d2aaaab
DATA gateconst<>+296(SB)/4, $0x3d2aaaab
DATA gateconst<>+300(SB)/4, $0x3d2aaaab
DATA gateconst<>+304(SB)/4, $0x3d2aaaab
DATA gateconst<>+308(SB)/4, $0x3d2aaaab
DATA gateconst<>+312(SB)/4, $0x3d2aaaab
DATA gateconst<>+316(SB)/4, $0x3d2aaaab
DATA gateconst<>+320(SB)/4, $0x3e2aaaab
DATA gateconst<>+324(SB)/4, $0x3e2aaaab
DATA gateconst<>+328(SB)/4, $0x3e2aaaab
DATA gateconst<>+332(SB)/4, $0x3e2aaaab
DATA gateconst<>+336(SB)/4, $0x3e2aaaab
DATA gateconst<>+340(SB)/4, $0x3e2aaaab
DATA gateconst<>+344(SB)/4, $0x3e2aaaab
DATA gateconst<>+348(SB)/4, $0x3e2aaaab
DATA gateconst<>+352(SB)/4, $0x3f000000
DATA gateconst<>+356(SB)/4, $0x3f000000
DATA gateconst<>+360(SB)/4, $0x3f000000
DATA gateconst<>+364(SB)/4, $0x3f000000
DATA gateconst<>+368(SB)/4, $0x3f000000
DATA gateconst<>+372(SB)/4, $0x3f000000
DATA gateconst<>+376(SB)/4, $0x3f000000
DATA gateconst<>+380(SB)/4, $0x3f000000
DATA gateconst<>+384(SB)/4, $0x0000007f
DATA gateconst<>+388(SB)/4, $0x0000007f
DATA gateconst<>+392(SB)/4, $0x0000007f
DATA gateconst<>+396(SB)/4, $0x0000007f
DATA gateconst<>+400(SB)/4, $0x0000007f
DATA gateconst<>+404(SB)/4, $0x0000007f
DATA gateconst<>+408(SB)/4, $0x0000007f
DATA gateconst<>+412(SB)/4, $0x0000007f
DATA gateconst<>+416(SB)/4, $0x3f200000
DATA gateconst<>+420(SB)/4, $0x3f200000
DATA gateconst<>+424(SB)/4, $0x3f200000
DATA gateconst<>+428(SB)/4, $0x3f200000
DATA gateconst<>+432(SB)/4, $0x3f200000
DATA gateconst<>+436(SB)/4, $0x3f200000
DATA gateconst<>+440(SB)/4, $0x3f200000
DATA gateconst<>+444(SB)/4, $0x3f200000
DATA gateconst<>+448(SB)/4, $0x3b0ceaa2
DATA gateconst<>+452(SB)/4, $0x3b0ceaa2
DATA gateconst<>+456(SB)/4, $0x3b0ceaa2
DATA gateconst<>+460(SB)/4, $0x3b0ceaa2
DATA gateconst<>+464(SB)/4, $0x3b0ceaa2
DATA gateconst<>+468(SB)/4, $0x3b0ceaa2
DATA gateconst<>+472(SB)/4, $0x3b0ceaa2
DATA gateconst<>+476(SB)/4, $0x3b0ceaa2
DATA gateconst<>+480(SB)/4, $0xbc061dd3
DATA gateconst<>+484(SB)/4, $0xbc061dd3
DATA gateconst<>+488(SB)/4, $0xbc061dd3
DATA gateconst<>+492(SB)/4, $0xbc061dd3
DATA gateconst<>+496(SB)/4, $0xbc061dd3
DATA gateconst<>+500(SB)/4, $0xbc061dd3
DATA gateconst<>+504(SB)/4, $0xbc061dd3
DATA gateconst<>+508(SB)/4, $0xbc061dd3
DATA gateconst<>+512(SB)/4, $0x3cb1cd53
DATA gateconst<>+516(SB)/4, $0x3cb1cd53
DATA gateconst<>+520(SB)/4, $0x3cb1cd53
DATA gateconst<>+524(SB)/4, $0x3cb1cd53
DATA gateconst<>+528(SB)/4, $0x3cb1cd53
DATA gateconst<>+532(SB)/4, $0x3cb1cd53
DATA gateconst<>+536(SB)/4, $0x3cb1cd53
DATA gateconst<>+540(SB)/4, $0x3cb1cd53
DATA gateconst<>+544(SB)/4, $0xbd5cf809
DATA gateconst<>+548(SB)/4, $0xbd5cf809
DATA gateconst<>+552(SB)/4, $0xbd5cf809
DATA gateconst<>+556(SB)/4, $0xbd5cf809
DATA gateconst<>+560(SB)/4, $0xbd5cf809
DATA gateconst<>+564(SB)/4, $0xbd5cf809
DATA gateconst<>+568(SB)/4, $0xbd5cf809
DATA gateconst<>+572(SB)/4, $0xbd5cf809
DATA gateconst<>+576(SB)/4, $0x3e088837
DATA gateconst<>+580(SB)/4, $0x3e088837
DATA gateconst<>+584(SB)/4, $0x3e088837
DATA gateconst<>+588(SB)/4, $0x3e088837
DATA gateconst<>+592(SB)/4, $0x3e088837
DATA gateconst<>+596(SB)/4, $0x3e088837
DATA gateconst<>+600(SB)/4, $0x3e088837
DATA gateconst<>+604(SB)/4, $0x3e088837
DATA gateconst<>+608(SB)/4, $0xbeaaaaaa
DATA gateconst<>+612(SB)/4, $0xbeaaaaaa
DATA gateconst<>+616(SB)/4, $0xbeaaaaaa
DATA gateconst<>+620(SB)/4, $0xbeaaaaaa
DATA gateconst<>+624(SB)/4, $0xbeaaaaaa
DATA gateconst<>+628(SB)/4, $0xbeaaaaaa
DATA gateconst<>+632(SB)/4, $0xbeaaaaaa
DATA gateconst<>+636(SB)/4, $0xbeaaaaaa
GLOBL gateconst<>(SB), RODATA|NOPTR, $640

// EXPNEG sets e to exp(u) for u in [-104, 0] (gates.go's expNeg); u, t1
// and t2 are overwritten.
#define EXPNEG(u, e, t1, t2) \
	VMULPS gateconst<>+96(SB), u, t1; \
	VCVTPS2DQ t1, t2; \
	VCVTDQ2PS t2, t1; \
	VFNMADD231PS gateconst<>+128(SB), t1, u; \
	VFNMADD231PS gateconst<>+160(SB), t1, u; \
	VMOVUPS gateconst<>+192(SB), e; \
	VFMADD213PS gateconst<>+224(SB), u, e; \
	VFMADD213PS gateconst<>+256(SB), u, e; \
	VFMADD213PS gateconst<>+288(SB), u, e; \
	VFMADD213PS gateconst<>+320(SB), u, e; \
	VFMADD213PS gateconst<>+352(SB), u, e; \
	VFMADD213PS Y14, u, e; \
	VFMADD213PS Y14, u, e; \
	VPSRAD $1, t2, t1; \
	VPSUBD t1, t2, t2; \
	VPADDD gateconst<>+384(SB), t1, t1; \
	VPSLLD $23, t1, t1; \
	VPADDD gateconst<>+384(SB), t2, t2; \
	VPSLLD $23, t2, t2; \
	VMULPS t2, e, e; \
	VMULPS t1, e, e

// func sigmoid8(x, y *float32, n int)
//
// y[i] = sigmoid(x[i]) for i < n, a multiple of 8 (gates.go's sigmoidGo).
// Y13: |x|'s mask, Y14: 1, Y15: 0.
TEXT ·sigmoid8(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   sigmoid8done
	VMOVUPS gateconst<>+0(SB), Y13
	VMOVUPS gateconst<>+64(SB), Y14
	VXORPS  Y15, Y15, Y15

sigmoid8loop:
	VMOVUPS (SI), Y0
	VANDPS  Y13, Y0, Y1
	VMINPS  gateconst<>+32(SB), Y1, Y1
	VSUBPS  Y1, Y15, Y1            // u = -min(|x|, 104)
	EXPNEG(Y1, Y2, Y3, Y4)         // e
	VADDPS  Y14, Y2, Y3            // 1 + e
	VCMPPS  $0x1d, Y15, Y0, Y4     // x >= 0
	VBLENDVPS Y4, Y14, Y2, Y2      // 1 there, e elsewhere
	VDIVPS  Y3, Y2, Y2
	VCMPPS  $0x03, Y0, Y0, Y4      // NaN
	VBLENDVPS Y4, Y0, Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     sigmoid8loop

sigmoid8done:
	VZEROUPPER
	RET

// func tanh8(x, y *float32, n int)
//
// y[i] = tanh(x[i]) for i < n, a multiple of 8 (gates.go's tanhGo).
TEXT ·tanh8(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   tanh8done
	VMOVUPS gateconst<>+0(SB), Y13
	VMOVUPS gateconst<>+64(SB), Y14
	VXORPS  Y15, Y15, Y15

tanh8loop:
	VMOVUPS (SI), Y0
	VANDPS  Y13, Y0, Y1            // a = |x|
	VADDPS  Y1, Y1, Y2
	VMINPS  gateconst<>+32(SB), Y2, Y2
	VSUBPS  Y2, Y15, Y2            // u = -min(2a, 104)
	EXPNEG(Y2, Y3, Y4, Y5)         // e
	VSUBPS  Y3, Y14, Y4            // 1 - e
	VADDPS  Y14, Y3, Y3            // 1 + e
	VDIVPS  Y3, Y4, Y4             // large a's tanh
	VMULPS  Y1, Y1, Y5             // s = a²
	VMOVUPS gateconst<>+448(SB), Y6
	VFMADD213PS gateconst<>+480(SB), Y5, Y6
	VFMADD213PS gateconst<>+512(SB), Y5, Y6
	VFMADD213PS gateconst<>+544(SB), Y5, Y6
	VFMADD213PS gateconst<>+576(SB), Y5, Y6
	VFMADD213PS gateconst<>+608(SB), Y5, Y6  // Q(s)
	VMULPS  Y5, Y1, Y7             // a·s
	VFMADD213PS Y1, Y7, Y6         // small a's tanh: a + a·s·Q(s)
	VCMPPS  $0x11, gateconst<>+416(SB), Y1, Y7 // a < 0.625
	VBLENDVPS Y7, Y6, Y4, Y4
	VANDNPS Y0, Y13, Y5            // x's sign
	VORPS   Y5, Y4, Y4
	VCMPPS  $0x03, Y0, Y0, Y7      // NaN
	VBLENDVPS Y7, Y0, Y4, Y4
	VMOVUPS Y4, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     tanh8loop

tanh8done:
	VZEROUPPER
	RET

// func sigmoidGrad8(y, dy, dx *float32, n int)
//
// dx[i] = dy[i]·y[i]·(1-y[i]) for i < n, a multiple of 8, rounded as Go
// rounds that expression.
TEXT ·sigmoidGrad8(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ dx+16(FP), DI
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   sigmoidgrad8done
	VMOVUPS gateconst<>+64(SB), Y14

sigmoidgrad8loop:
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VMULPS  Y0, Y1, Y1
	VSUBPS  Y0, Y14, Y2
	VMULPS  Y2, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     sigmoidgrad8loop

sigmoidgrad8done:
	VZEROUPPER
	RET

// func tanhGrad8(y, dy, dx *float32, n int)
//
// dx[i] = dy[i]·(1-y[i]·y[i]) for i < n, a multiple of 8, rounded as Go
// rounds that expression.
TEXT ·tanhGrad8(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ dx+16(FP), DI
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   tanhgrad8done
	VMOVUPS gateconst<>+64(SB), Y14

tanhgrad8loop:
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VMULPS  Y0, Y0, Y2
	VSUBPS  Y2, Y14, Y2
	VMULPS  Y2, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     tanhgrad8loop

tanhgrad8done:
	VZEROUPPER
	RET

// func mul(dst, a, b *float32, n int)
//
// dst[i] = a[i]·b[i] for i < n, a multiple of 8.
TEXT ·mul(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX

mulloop:
	CMPQ    AX, CX
	JGE     muldone
	VMOVUPS (SI)(AX*4), Y0
	VMULPS  (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     mulloop

muldone:
	VZEROUPPER
	RET

// func addProduct(dst, a, b *float32, n int)
//
// dst[i] += a[i]·b[i] for i < n, a multiple of 8: the product rounded,
// then the sum (no fused multiply-add), as Go computes it.
TEXT ·addProduct(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX

addproductloop:
	CMPQ    AX, CX
	JGE     addproductdone
	VMOVUPS (SI)(AX*4), Y0
	VMULPS  (DX)(AX*4), Y0, Y0
	VADDPS  (DI)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     addproductloop

addproductdone:
	VZEROUPPER
	RET

// func sub(dst, a, b *float32, n int)
//
// dst[i] = a[i] - b[i] for i < n, a multiple of 8.
TEXT ·sub(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX

subloop:
	CMPQ    AX, CX
	JGE     subdone
	VMOVUPS (SI)(AX*4), Y0
	VSUBPS  (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     subloop

subdone:
	VZEROUPPER
	RET

// The softmax's steps (softmax.go).

// func maxOf8(x *float32, n int) float32
//
// The largest of x[i], i < n, a multiple of 8 (at least 8).
TEXT ·maxOf8(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	VMOVUPS (SI), Y0

maxof8loop:
	VMAXPS  (SI), Y0, Y0
	ADDQ    $32, SI
	DECQ    CX
	JNZ     maxof8loop
	VEXTRACTF128 $1, Y0, X1
	VMAXPS  X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS  X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS  X1, X0, X0
	VZEROUPPER
	MOVSS   X0, ret+16(FP)
	RET

// func expChains8(x, y *float32, n int, m float32, chains *float32)
//
// y[i] = exp(-min(m-x[i], 104)) (softmax.go's ExpShift) and chains[i%16]
// += y[i] for i < n, a multiple of 16: Y8 holds chains 0-7, Y9 8-15. The
// minimum keeps a NaN difference (its second source), so NaN reaches y
// and the sums.
TEXT ·expChains8(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y12
	MOVQ chains+32(FP), DX
	SHRQ $4, CX
	JZ   expchains8done
	VMOVUPS gateconst<>+32(SB), Y13
	VMOVUPS gateconst<>+64(SB), Y14
	VXORPS  Y15, Y15, Y15
	VMOVUPS (DX), Y8
	VMOVUPS 32(DX), Y9

expchains8loop:
	VSUBPS  (SI), Y12, Y0          // m - x
	VMINPS  Y0, Y13, Y0            // min(104, m - x), NaN kept
	VSUBPS  Y0, Y15, Y0            // u = 0 - that
	EXPNEG(Y0, Y1, Y2, Y3)
	VMOVUPS Y1, (DI)
	VADDPS  Y1, Y8, Y8
	VSUBPS  32(SI), Y12, Y4
	VMINPS  Y4, Y13, Y4
	VSUBPS  Y4, Y15, Y4
	EXPNEG(Y4, Y5, Y6, Y7)
	VMOVUPS Y5, 32(DI)
	VADDPS  Y5, Y9, Y9
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     expchains8loop
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)

expchains8done:
	VZEROUPPER
	RET

// func dotChains8(a, b *float32, n int, chains *float32)
//
// chains[i%16] += a[i]·b[i] for i < n, a multiple of 16, the product
// rounded, then the sum (no fused multiply-add).
TEXT ·dotChains8(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ chains+24(FP), DX
	SHRQ $4, CX
	JZ   dotchains8done
	VMOVUPS (DX), Y8
	VMOVUPS 32(DX), Y9

dotchains8loop:
	VMOVUPS (SI), Y0
	VMULPS  (DI), Y0, Y0
	VADDPS  Y0, Y8, Y8
	VMOVUPS 32(SI), Y1
	VMULPS  32(DI), Y1, Y1
	VADDPS  Y1, Y9, Y9
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     dotchains8loop
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)

dotchains8done:
	VZEROUPPER
	RET

// func scaleBy8(y *float32, n int, s float32)
//
// y[i] = y[i]·s for i < n, a multiple of 8.
TEXT ·scaleBy8(SB), NOSPLIT, $0-20
	MOVQ y+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS s+16(FP), Y1
	SHRQ $3, CX
	JZ   scaleby8done

scaleby8loop:
	VMULPS  (DI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNZ     scaleby8loop

scaleby8done:
	VZEROUPPER
	RET

// func softmaxGrad8(y, dy, dx *float32, n int, s float32)
//
// dx[i] = y[i]·(dy[i] - s) for i < n, a multiple of 8, each operation
// rounded.
TEXT ·softmaxGrad8(SB), NOSPLIT, $0-36
	MOVQ y+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ dx+16(FP), DI
	MOVQ n+24(FP), CX
	VBROADCASTSS s+32(FP), Y2
	SHRQ $3, CX
	JZ   softmaxgrad8done

softmaxgrad8loop:
	VMOVUPS (DX), Y0
	VSUBPS  Y2, Y0, Y0
	VMULPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     softmaxgrad8loop

softmaxgrad8done:
	VZEROUPPER
	RET
