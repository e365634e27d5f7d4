//go:build !purego

#include "textflag.h"

DATA logisticOne<>+0(SB)/8, $1.0
GLOBL logisticOne<>(SB), RODATA|NOPTR, $8
DATA logisticFour<>+0(SB)/8, $4.0
GLOBL logisticFour<>(SB), RODATA|NOPTR, $8

// func logisticChunkAVX(u, v, in, out []float64)
//
// For each k: c_l = 4/(1 + u_k·v_l); in[l] += c_l; out[k] = the sum of the
// c_l in logisticChunkSumsGo's order: four lane sums s_0..s_3 over the
// first len(v) &^ 3 entries (lane l mod 4), combined as (s_0 + s_2) +
// (s_1 + s_3), then the remaining entries one by one.
TEXT ·logisticChunkAVX(SB), NOSPLIT, $0-96
	MOVQ u_base+0(FP), SI
	MOVQ u_len+8(FP), R8
	MOVQ v_base+24(FP), DI
	MOVQ v_len+32(FP), R9
	MOVQ in_base+48(FP), DX
	MOVQ out_base+72(FP), R10
	MOVQ R9, R11
	ANDQ $~3, R11 // the four-wide part
	VBROADCASTSD logisticOne<>(SB), Y14
	VBROADCASTSD logisticFour<>(SB), Y15
	XORQ BX, BX // k

outer:
	CMPQ BX, R8
	JGE  done
	VBROADCASTSD (SI)(BX*8), Y0 // u_k
	VXORPD       Y1, Y1, Y1     // lane sums
	XORQ         CX, CX         // l

wide:
	CMPQ    CX, R11
	JGE     reduce
	VMULPD  (DI)(CX*8), Y0, Y2 // u_k·v_l
	VADDPD  Y14, Y2, Y2        // 1 + u_k·v_l
	VDIVPD  Y2, Y15, Y2        // 4 / (1 + u_k·v_l)
	VADDPD  Y2, Y1, Y1         // lane sums
	VADDPD  (DX)(CX*8), Y2, Y3 // in[l] + c
	VMOVUPD Y3, (DX)(CX*8)
	ADDQ    $4, CX
	JMP     wide

reduce:
	VEXTRACTF128 $1, Y1, X2 // (s_2, s_3)
	VADDPD       X2, X1, X1 // (s_0 + s_2, s_1 + s_3)
	VPERMILPD    $1, X1, X2 // (s_1 + s_3, ·)
	VADDSD       X2, X1, X1 // (s_0 + s_2) + (s_1 + s_3)

tail:
	CMPQ   CX, R9
	JGE    store
	VMOVSD (DI)(CX*8), X2
	VMULSD X0, X2, X2
	VADDSD X14, X2, X2
	VDIVSD X2, X15, X2
	VADDSD X2, X1, X1
	VADDSD (DX)(CX*8), X2, X3
	VMOVSD X3, (DX)(CX*8)
	INCQ   CX
	JMP    tail

store:
	VMOVSD X1, (R10)(BX*8)
	INCQ   BX
	JMP    outer

done:
	VZEROUPPER
	RET
