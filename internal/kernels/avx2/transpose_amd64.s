//go:build amd64 && !purego

#include "textflag.h"

// func transpose8(x *float32, ldx uintptr, out *float32, ldo uintptr, nr, nc int)
//
// Transposes the (8·nr)×(8·nc) matrix at x (row stride ldx bytes) into
// out (row stride ldo bytes), one 8×8 block at a time: its 8 rows loaded,
// interleaved in pairs (VUNPCKLPS/VUNPCKHPS), in fours (VSHUFPS) and
// across the halves (VPERM2F128), and stored as 8 rows of out. nr and nc
// are at least 1.
TEXT ·transpose8(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ ldx+8(FP), AX
	MOVQ out+16(FP), DI
	MOVQ ldo+24(FP), BX
	MOVQ nr+32(FP), R8
	MOVQ nc+40(FP), R9
	MOVQ AX, R10
	SHLQ $3, R10                   // 8 rows of x
	MOVQ BX, R11
	SHLQ $3, R11                   // 8 rows of out

rowblocks:
	MOVQ SI, R12                   // the block in x
	MOVQ DI, R13                   // its place in out
	MOVQ R9, CX

colblocks:
	MOVQ    R12, DX
	VMOVUPS (DX), Y0
	ADDQ    AX, DX
	VMOVUPS (DX), Y1
	ADDQ    AX, DX
	VMOVUPS (DX), Y2
	ADDQ    AX, DX
	VMOVUPS (DX), Y3
	ADDQ    AX, DX
	VMOVUPS (DX), Y4
	ADDQ    AX, DX
	VMOVUPS (DX), Y5
	ADDQ    AX, DX
	VMOVUPS (DX), Y6
	ADDQ    AX, DX
	VMOVUPS (DX), Y7
	VUNPCKLPS Y1, Y0, Y8           // a0 b0 a1 b1 | a4 b4 a5 b5
	VUNPCKHPS Y1, Y0, Y9           // a2 b2 a3 b3 | a6 b6 a7 b7
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0     // a0 b0 c0 d0 | a4 b4 c4 d4
	VSHUFPS $0xee, Y10, Y8, Y1     // a1 b1 c1 d1 | a5 b5 c5 d5
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xee, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4    // e0 f0 g0 h0 | e4 f4 g4 h4
	VSHUFPS $0xee, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xee, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8   // column 0: a0 ... h0
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12  // column 4
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	MOVQ    R13, DX
	VMOVUPS Y8, (DX)
	ADDQ    BX, DX
	VMOVUPS Y9, (DX)
	ADDQ    BX, DX
	VMOVUPS Y10, (DX)
	ADDQ    BX, DX
	VMOVUPS Y11, (DX)
	ADDQ    BX, DX
	VMOVUPS Y12, (DX)
	ADDQ    BX, DX
	VMOVUPS Y13, (DX)
	ADDQ    BX, DX
	VMOVUPS Y14, (DX)
	ADDQ    BX, DX
	VMOVUPS Y15, (DX)
	ADDQ    $32, R12               // the next 8 columns of x
	ADDQ    R11, R13               // are the next 8 rows of out
	DECQ    CX
	JNZ     colblocks
	ADDQ    R10, SI                // the next 8 rows of x
	ADDQ    $32, DI                // are the next 8 columns of out
	DECQ    R8
	JNZ     rowblocks
	VZEROUPPER
	RET
