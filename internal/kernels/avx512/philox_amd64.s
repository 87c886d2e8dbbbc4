//go:build amd64 && !purego

#include "textflag.h"

// The lane numbers 0 to 15: each lane's block within a group of 16.
DATA philoxLanes<>+0(SB)/4, $0
DATA philoxLanes<>+4(SB)/4, $1
DATA philoxLanes<>+8(SB)/4, $2
DATA philoxLanes<>+12(SB)/4, $3
DATA philoxLanes<>+16(SB)/4, $4
DATA philoxLanes<>+20(SB)/4, $5
DATA philoxLanes<>+24(SB)/4, $6
DATA philoxLanes<>+28(SB)/4, $7
DATA philoxLanes<>+32(SB)/4, $8
DATA philoxLanes<>+36(SB)/4, $9
DATA philoxLanes<>+40(SB)/4, $10
DATA philoxLanes<>+44(SB)/4, $11
DATA philoxLanes<>+48(SB)/4, $12
DATA philoxLanes<>+52(SB)/4, $13
DATA philoxLanes<>+56(SB)/4, $14
DATA philoxLanes<>+60(SB)/4, $15
GLOBL philoxLanes<>(SB), RODATA|NOPTR, $64

// PHILOXMUL sets lo and hi to the low and high words of m·c, lane by lane
// (32×32 → 64 bits): VPMULUDQ multiplies the even lanes, and the odd ones
// once shifted down; the high words are then blended under K1 (odd lanes).
#define PHILOXMUL(m, c, lo, hi, t) \
	VPMULLD   m, c, lo        \
	VPMULUDQ  m, c, hi        \
	VPSRLQ    $32, c, t       \
	VPMULUDQ  m, t, t         \
	VPSRLQ    $32, hi, hi     \
	VPBLENDMD t, hi, K1, hi

// func dropoutPhilox(x, y *float32, groups int, block, step, key uint64, t uint32, scale float32)
//
// y = x·scale where unit u's Philox4x32-10 word (word u%4 of the block
// u/4 with counter (block, step) and key) is at least t, else 0, for
// groups·64 units from unit 4·block: 16 blocks a group, one in each lane,
// the counter's four words and the key's two in Z0-Z5 (ops.Philox4x32).
// The caller keeps the block's low word from wrapping within a group.
TEXT ·dropoutPhilox(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ groups+16(FP), CX
	MOVQ block+24(FP), R8
	MOVQ step+32(FP), R9
	MOVQ key+40(FP), R10
	MOVL t+48(FP), AX
	VPBROADCASTD AX, Z20
	VBROADCASTSS scale+52(FP), Z21
	MOVL $0xD2511F53, AX
	VPBROADCASTD AX, Z6
	MOVL $0xCD9E8D57, AX
	VPBROADCASTD AX, Z7
	MOVL $0x9E3779B9, AX
	VPBROADCASTD AX, Z8
	MOVL $0xBB67AE85, AX
	VPBROADCASTD AX, Z9
	MOVL R9, AX
	VPBROADCASTD AX, Z22       // step, low word
	MOVQ R9, AX
	SHRQ $32, AX
	VPBROADCASTD AX, Z23       // step, high word
	MOVL R10, AX
	VPBROADCASTD AX, Z24       // key, low word
	MOVQ R10, AX
	SHRQ $32, AX
	VPBROADCASTD AX, Z25       // key, high word
	VMOVDQU32 philoxLanes<>(SB), Z26
	MOVL $0xAAAA, AX
	KMOVW AX, K1
	MOVQ $0x1111111111111111, R11
	MOVQ $0x2222222222222222, R12
	MOVQ $0x4444444444444444, R13
	MOVQ $0x8888888888888888, R14
	TESTQ CX, CX
	JZ   philoxdone

philoxgroup:
	MOVL R8, AX
	VPBROADCASTD AX, Z0
	VPADDD Z26, Z0, Z0         // the lanes' blocks, low words
	MOVQ R8, AX
	SHRQ $32, AX
	VPBROADCASTD AX, Z1        // high words
	VMOVDQA32 Z22, Z2
	VMOVDQA32 Z23, Z3
	VMOVDQA32 Z24, Z4
	VMOVDQA32 Z25, Z5
	MOVQ $10, DX

philoxround:
	PHILOXMUL(Z6, Z0, Z13, Z10, Z11) // lo0, hi0 = m0·c0
	PHILOXMUL(Z7, Z2, Z15, Z14, Z12) // lo1, hi1 = m1·c2
	VPTERNLOGD $0x96, Z4, Z1, Z14    // hi1 ^ c1 ^ k0
	VPTERNLOGD $0x96, Z5, Z3, Z10    // hi0 ^ c3 ^ k1
	VMOVDQA32 Z14, Z0
	VMOVDQA32 Z15, Z1
	VMOVDQA32 Z10, Z2
	VMOVDQA32 Z13, Z3
	VPADDD Z8, Z4, Z4
	VPADDD Z9, Z5, Z5
	DECQ DX
	JNZ  philoxround

	// Kept where the word is at least t; unit 4·lane+word gets bit
	// 4·lane+word of AX.
	VPCMPUD $5, Z20, Z0, K2
	VPCMPUD $5, Z20, Z1, K3
	VPCMPUD $5, Z20, Z2, K4
	VPCMPUD $5, Z20, Z3, K5
	KMOVW K2, AX
	PDEPQ R11, AX, AX
	KMOVW K3, BX
	PDEPQ R12, BX, BX
	ORQ  BX, AX
	KMOVW K4, BX
	PDEPQ R13, BX, BX
	ORQ  BX, AX
	KMOVW K5, BX
	PDEPQ R14, BX, BX
	ORQ  BX, AX

	KMOVW AX, K6
	VMULPS.Z (SI), Z21, K6, Z16
	VMOVUPS Z16, (DI)
	SHRQ $16, AX
	KMOVW AX, K6
	VMULPS.Z 64(SI), Z21, K6, Z16
	VMOVUPS Z16, 64(DI)
	SHRQ $16, AX
	KMOVW AX, K6
	VMULPS.Z 128(SI), Z21, K6, Z16
	VMOVUPS Z16, 128(DI)
	SHRQ $16, AX
	KMOVW AX, K6
	VMULPS.Z 192(SI), Z21, K6, Z16
	VMOVUPS Z16, 192(DI)

	ADDQ $256, SI
	ADDQ $256, DI
	ADDQ $16, R8
	DECQ CX
	JNZ  philoxgroup

philoxdone:
	VZEROUPPER
	RET
