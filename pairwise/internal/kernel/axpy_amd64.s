//go:build !purego

#include "textflag.h"

// axpyAVX: AxpyGo (axpy.go), y[i] ← y[i] + a·x[i] for i < len(x), eight
// lanes per iteration in two YMM registers, then four, then one by one:
// per lane VMULPD (a·x_i rounded) then VADDPD (y_i + that, rounded), the
// reference's two IEEE operations in its order, no FMA — bit for bit
// (TestAxpyMatchesRef; a NaN result is NaN in both, its payload may
// differ).

// func axpyAVX(a float64, x, y []float64)
TEXT ·axpyAVX(SB), NOSPLIT, $0-56
	VBROADCASTSD a+0(FP), Y0
	MOVQ x_base+8(FP), SI
	MOVQ x_len+16(FP), CX
	MOVQ y_base+32(FP), DI
	XORQ AX, AX
	MOVQ CX, DX
	SUBQ $8, DX

loop8:
	CMPQ AX, DX
	JG   tail4
	VMULPD (SI)(AX*8), Y0, Y1
	VMULPD 32(SI)(AX*8), Y0, Y2
	VADDPD (DI)(AX*8), Y1, Y1
	VADDPD 32(DI)(AX*8), Y2, Y2
	VMOVUPD Y1, (DI)(AX*8)
	VMOVUPD Y2, 32(DI)(AX*8)
	ADDQ $8, AX
	JMP  loop8

tail4:
	MOVQ CX, DX
	SUBQ $4, DX
	CMPQ AX, DX
	JG   tail1
	VMULPD (SI)(AX*8), Y0, Y1
	VADDPD (DI)(AX*8), Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ $4, AX

tail1:
	CMPQ AX, CX
	JGE  done
	VMULSD (SI)(AX*8), X0, X1
	VADDSD (DI)(AX*8), X1, X1
	VMOVSD X1, (DI)(AX*8)
	INCQ AX
	JMP  tail1

done:
	VZEROUPPER
	RET
