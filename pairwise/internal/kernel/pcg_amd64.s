//go:build !purego

#include "textflag.h"

// The passes pcgFill8 and pcgDraw8 share, written once. Lanes: Z0 = the
// high halves h, Z1 = the low halves l of eight states; DX = jump.

// PCG_CONSTS broadcasts jump = {M⁸ high, M⁸ low, C⁸ high, C⁸ low} to
// Z20–Z23, b1 (the high 32 bits of M⁸ low) to Z24, and the constants
// 2³² − 1, 1 and DXSM's multiplier to Z25–Z27. Clobbers AX.
#define PCG_CONSTS \
	VPBROADCASTQ 0(DX), Z20; \
	VPBROADCASTQ 8(DX), Z21; \
	VPBROADCASTQ 16(DX), Z22; \
	VPBROADCASTQ 24(DX), Z23; \
	VPSRLQ $32, Z21, Z24; \
	MOVQ $0xffffffff, AX; \
	VPBROADCASTQ AX, Z25; \
	MOVQ $1, AX; \
	VPBROADCASTQ AX, Z26; \
	MOVQ $0xda942042e4dd58b5, AX; \
	VPBROADCASTQ AX, Z27

// PCG_OUTPUT: Z2 = the DXSM outputs of the lanes: x = h ^ h>>32;
// x *= cheap; x ^= x>>48; x *= l|1. Clobbers Z3.
#define PCG_OUTPUT \
	VPSRLQ  $32, Z0, Z2; \
	VPXORQ  Z2, Z0, Z2; \
	VPMULLQ Z27, Z2, Z2; \
	VPSRLQ  $48, Z2, Z3; \
	VPXORQ  Z3, Z2, Z2; \
	VPORQ   Z26, Z1, Z3; \
	VPMULLQ Z3, Z2, Z2

// PCG_STEP moves every lane eight steps on, s ↦ s·M⁸ + C⁸ (mod 2¹²⁸):
// l' = l·mL + cL; h' = hi(l·mL) + h·mL + l·mH + cH + carry, with hi(l·mL)
// from 32-bit pieces (l = a1·2³² + a0, mL = b1·2³² + b0; the middle sum
// (a0·b0 >> 32) + low32(a0·b1) + low32(a1·b0) < 3·2³²). Clobbers Z2–Z11,
// K1.
#define PCG_STEP \
	VPMULLQ Z21, Z1, Z2; \
	VPMULLQ Z21, Z0, Z3; \
	VPMULLQ Z20, Z1, Z4; \
	VPADDQ  Z4, Z3, Z3; \
	VPSRLQ   $32, Z1, Z5; \
	VPMULUDQ Z21, Z1, Z6; \
	VPMULUDQ Z24, Z1, Z7; \
	VPMULUDQ Z21, Z5, Z8; \
	VPMULUDQ Z24, Z5, Z9; \
	VPSRLQ   $32, Z6, Z6; \
	VPANDQ   Z25, Z7, Z10; \
	VPANDQ   Z25, Z8, Z11; \
	VPADDQ   Z10, Z6, Z6; \
	VPADDQ   Z11, Z6, Z6; \
	VPSRLQ   $32, Z6, Z6; \
	VPSRLQ   $32, Z7, Z7; \
	VPSRLQ   $32, Z8, Z8; \
	VPADDQ   Z7, Z9, Z9; \
	VPADDQ   Z8, Z9, Z9; \
	VPADDQ   Z6, Z9, Z9; \
	VPADDQ   Z9, Z3, Z3; \
	VPADDQ  Z23, Z2, Z1; \
	VPCMPUQ $1, Z2, Z1, K1; \
	VPADDQ  Z22, Z3, Z0; \
	VPADDQ  Z26, Z0, K1, Z0

// func pcgFill8(lanes *[16]uint64, dst []uint64, jump *[4]uint64)
//
// Eight PCG-DXSM states side by side (AVX-512F/DQ): lanes holds the high
// halves h[0..7], then the low halves l[0..7], of the states after 1…8
// steps. For each group of eight, it writes the DXSM outputs of the lanes
// to dst, then (if more groups follow) moves every lane eight steps on,
// s ↦ s·M⁸ + C⁸ with jump = {M⁸ high, M⁸ low, C⁸ high, C⁸ low}; at the end
// lanes holds the states of the last group written. len(dst) is a positive
// multiple of 8. Integer arithmetic mod 2⁶⁴ per lane: exactly pcgAffine and
// pcgOutput (TestPCGFill8MatchesRef).
TEXT ·pcgFill8(SB), NOSPLIT, $0-40
	MOVQ lanes+0(FP), SI
	MOVQ dst_base+8(FP), DI
	MOVQ dst_len+16(FP), CX
	MOVQ jump+32(FP), DX
	VMOVDQU64 (SI), Z0   // h
	VMOVDQU64 64(SI), Z1 // l
	PCG_CONSTS

loop:
	PCG_OUTPUT
	VMOVDQU64 Z2, (DI)
	ADDQ $64, DI
	SUBQ $8, CX
	JLE  done
	PCG_STEP
	JMP loop

done:
	VMOVDQU64 Z0, (SI)
	VMOVDQU64 Z1, 64(SI)
	VZEROUPPER
	RET

// func pcgDraw8(lanes *[16]uint64, dst []int, raw []uint64, jump *[4]uint64, n, limit uint64) int
//
// pcgFill8 followed by Lemire's reduction to [0, n) for 2 ≤ n < 2³²:
// dst[k] = ⌊x_k·n / 2⁶⁴⌋ with x·n computed from 32-bit pieces (x = x1·2³² + x0:
// x·n = x1·n·2³² + x0·n, both products < 2⁶⁴). A group of eight in which some
// low half x·n mod 2⁶⁴ is below n (a possible redraw, probability < 8n/2⁶⁴)
// is not reduced (limit = n; any limit ≥ n is correct, a larger one only
// stops more often): its raw draws go to raw[k:k+8], lanes holds its states,
// and the function returns k, the number of draws reduced. Otherwise it returns
// len(dst) with lanes as pcgFill8 leaves them. len(dst) is a positive
// multiple of 8; len(raw) ≥ len(dst).
TEXT ·pcgDraw8(SB), NOSPLIT, $0-88
	MOVQ lanes+0(FP), SI
	MOVQ dst_base+8(FP), DI
	MOVQ dst_len+16(FP), CX
	MOVQ raw_base+32(FP), R8
	MOVQ jump+56(FP), DX
	VPBROADCASTQ n+64(FP), Z28
	VPBROADCASTQ limit+72(FP), Z29
	XORQ BX, BX // draws reduced
	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	PCG_CONSTS

dloop:
	PCG_OUTPUT // x

	VPMULUDQ Z28, Z2, Z5 // x0·n
	VPSRLQ   $32, Z2, Z6
	VPMULUDQ Z28, Z6, Z6 // x1·n
	VPSLLQ   $32, Z6, Z7
	VPADDQ   Z5, Z7, Z7  // x·n mod 2⁶⁴
	VPCMPUQ  $1, Z29, Z7, K2 // low half < limit
	KORTESTB K2, K2
	JNZ      dbail
	VPSRLQ   $32, Z5, Z5
	VPADDQ   Z5, Z6, Z6
	VPSRLQ   $32, Z6, Z6 // ⌊x·n / 2⁶⁴⌋
	VMOVDQU64 Z6, (DI)(BX*8)
	ADDQ $8, BX
	CMPQ BX, CX
	JGE  ddone

	PCG_STEP
	JMP dloop

dbail:
	VMOVDQU64 Z2, (R8)(BX*8)

ddone:
	VMOVDQU64 Z0, (SI)
	VMOVDQU64 Z1, 64(SI)
	VZEROUPPER
	MOVQ BX, ret+80(FP)
	RET
