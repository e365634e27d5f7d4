//go:build !purego

#include "textflag.h"

// The reciprocal-pivot Cholesky (CholLowerRecipGo, CholSolveRecipGo in
// chol.go): chol_amd64.s's cholRowAVX, cholRow4AVX and cholBackAVX with
// every division by a pivot L_jj replaced by a multiplication by the
// diagonal entry, which this factor stores as 1/L_jj. The instructions are
// otherwise the same, in the same order (the file is that text with
// VDIVSD → VMULSD and the names changed): each entry is the Go reference's
// bit for bit (TestCholRecipMatchesRef). A division sits on the dependent
// chain of every entry (≈ 13–20 cycles where a multiplication takes 4), so
// this shortens the chains of the factorization and of both solves.

// cholRowRecipAVX: entries 0…n−1 of one row ri of the forward recurrence of
// CholLowerGo / CholSolveGo (chol.go), bit for bit. The factor L is read
// from the upper triangle of l (u[k][j] = l[k·d + j] = L_jk, the mirror
// CholLower writes). For each block j, j+4, … (the last one partial):
//
//   - the prefix sums over k < j of the four entries j…j+3 run in the lanes
//     of Y0 (even k) and Y1 (odd k): lane c gets u[k][j+c]·ri[k], added in
//     k order (VMULPD then VADDPD, no FMA), which is cholRow4's a_c and b_c
//     (lanes past the row read finite memory inside l and are not used);
//   - the block's entries are then finished in scalar code in cholRow4's
//     order, each (ri[j+c] − (a_c + b_c))/L_{j+c,j+c}, the partial block's
//     entries being dot's (the same sums, see CholLowerGo).
//
// The blocks start at j0 (a multiple of 4; the entries before it are
// done). With col ≥ 0 each entry is also written to u[j+c][col] (the mirror of row
// col of L). The prefix loads read l up to index (j−1)·d + j + 3 ≤ d² − d + 2
// for the block at j ≥ 4 < d, inside l for d ≥ 3.

// func cholRowRecipAVX(l *float64, d int, ri *float64, j0, n int, col int)
TEXT ·cholRowRecipAVX(SB), NOSPLIT, $64-48
	MOVQ l+0(FP), SI
	MOVQ d+8(FP), R8
	SHLQ $3, R8
	MOVQ ri+16(FP), DI
	MOVQ j0+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ col+40(FP), BX

rblock:
	CMPQ R10, CX
	JGE  rdone
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	LEAQ (SI)(R10*8), R11
	MOVQ DI, R12
	MOVQ R10, R13
	SHRQ $1, R13
	TESTQ R13, R13
	JEQ  rtail

rprefix:
	VBROADCASTSD (R12), Y2
	VMULPD (R11), Y2, Y2
	VADDPD Y2, Y0, Y0
	VBROADCASTSD 8(R12), Y3
	VMULPD (R11)(R8*1), Y3, Y3
	VADDPD Y3, Y1, Y1
	ADDQ $16, R12
	LEAQ (R11)(R8*2), R11
	DECQ R13
	JNE  rprefix

rtail:
	VMOVUPD Y0, 0(SP)
	VMOVUPD Y1, 32(SP)
	MOVQ CX, DX
	SUBQ R10, DX
	MOVQ R10, AX
	IMULQ R8, AX
	ADDQ SI, AX
	LEAQ (AX)(R10*8), R11
	LEAQ (AX)(BX*8), AX
	LEAQ (DI)(R10*8), R12

	// v0 = (ri[j] − (a0 + b0)) / L_jj
	VMOVSD 0(SP), X4
	VADDSD 32(SP), X4, X4
	VMOVSD (R12), X5
	VSUBSD X4, X5, X5
	VMULSD (R11), X5, X8
	VMOVSD X8, (R12)
	TESTQ BX, BX
	JS   rnov0
	VMOVSD X8, (AX)

rnov0:
	CMPQ DX, $1
	JEQ  rnext

	// v1 = (ri[j+1] − ((a1 + L_{j+1,j}·v0) + b1)) / L_{j+1,j+1}
	VMULSD 8(R11), X8, X4
	VADDSD 8(SP), X4, X4
	VADDSD 40(SP), X4, X4
	VMOVSD 8(R12), X5
	VSUBSD X4, X5, X5
	MOVQ R11, R9
	ADDQ R8, R9
	VMULSD 8(R9), X5, X9
	VMOVSD X9, 8(R12)
	TESTQ BX, BX
	JS   rnov1
	VMOVSD X9, (AX)(R8*1)

rnov1:
	CMPQ DX, $2
	JEQ  rnext

	// v2 = (ri[j+2] − ((a2 + L_{j+2,j}·v0) + (b2 + L_{j+2,j+1}·v1))) / L_{j+2,j+2}
	VMULSD 16(R11), X8, X4
	VADDSD 16(SP), X4, X4
	VMULSD 16(R9), X9, X6
	VADDSD 48(SP), X6, X6
	VADDSD X6, X4, X4
	VMOVSD 16(R12), X5
	VSUBSD X4, X5, X5
	ADDQ R8, R9
	VMULSD 16(R9), X5, X10
	VMOVSD X10, 16(R12)
	TESTQ BX, BX
	JS   rnov2
	LEAQ (AX)(R8*2), R13
	VMOVSD X10, (R13)

rnov2:
	CMPQ DX, $3
	JEQ  rnext

	// v3 = (ri[j+3] − (((a3 + L_{j+3,j}·v0) + L_{j+3,j+2}·v2) + (b3 + L_{j+3,j+1}·v1))) / L_{j+3,j+3}
	VMULSD 24(R11), X8, X4
	VADDSD 24(SP), X4, X4
	MOVQ R11, R13
	ADDQ R8, R13
	VMULSD 24(R13), X9, X6
	VADDSD 56(SP), X6, X6
	VMULSD 24(R9), X10, X7
	VADDSD X7, X4, X4
	VADDSD X6, X4, X4
	VMOVSD 24(R12), X5
	VSUBSD X4, X5, X5
	ADDQ R8, R9
	VMULSD 24(R9), X5, X11
	VMOVSD X11, 24(R12)
	TESTQ BX, BX
	JS   rnext
	LEAQ (AX)(R8*2), R13
	ADDQ R8, R13
	VMOVSD X11, (R13)

rnext:
	ADDQ $4, R10
	JMP  rblock

rdone:
	VZEROUPPER
	RET

// FULL finishes a full block j of one row in cholRow4RecipAVX: rp = &ri[j],
// acc = the row's prefix sums (a_0…a_3 at 0, b_0…b_3 at 32), mo = the
// byte offset of the row's mirror column from AX = &u[j][col]; R11 =
// &u[j][j], R9 = &u[j+2][j], CX = &u[j+1][col], R8 = the row stride. The
// operations are cholRowRecipAVX's full-block tail, in the same order.
#define FULLR(rp, acc, mo) \
	VMOVSD 0(acc), X4; \
	VADDSD 32(acc), X4, X4; \
	VMOVSD 0(rp), X5; \
	VSUBSD X4, X5, X5; \
	VMULSD (R11), X5, X8; \
	VMOVSD X8, 0(rp); \
	VMOVSD X8, mo(AX); \
	VMULSD 8(R11), X8, X4; \
	VADDSD 8(acc), X4, X4; \
	VADDSD 40(acc), X4, X4; \
	VMOVSD 8(rp), X5; \
	VSUBSD X4, X5, X5; \
	VMULSD 8(R11)(R8*1), X5, X9; \
	VMOVSD X9, 8(rp); \
	VMOVSD X9, mo(CX); \
	VMULSD 16(R11), X8, X4; \
	VADDSD 16(acc), X4, X4; \
	VMULSD 16(R11)(R8*1), X9, X6; \
	VADDSD 48(acc), X6, X6; \
	VADDSD X6, X4, X4; \
	VMOVSD 16(rp), X5; \
	VSUBSD X4, X5, X5; \
	VMULSD 16(R9), X5, X10; \
	VMOVSD X10, 16(rp); \
	VMOVSD X10, mo(AX)(R8*2); \
	VMULSD 24(R11), X8, X4; \
	VADDSD 24(acc), X4, X4; \
	VMULSD 24(R11)(R8*1), X9, X6; \
	VADDSD 56(acc), X6, X6; \
	VMULSD 24(R9), X10, X7; \
	VADDSD X7, X4, X4; \
	VADDSD X6, X4, X4; \
	VMOVSD 24(rp), X5; \
	VSUBSD X4, X5, X5; \
	VMULSD 24(R9)(R8*1), X5, X11; \
	VMOVSD X11, 24(rp); \
	VMOVSD X11, mo(CX)(R8*2)

// cholRow4RecipAVX: cholRowRecipAVX's full blocks j = 0, 4, … (j + 4 ≤ n) for four
// consecutive rows at once, ri + r·d (row col+r, mirror column col+r,
// r = 0…3), each entry with the same operations in the same order as
// cholRowRecipAVX (so bit for bit CholLowerGo's). The prefix loads of the
// factor's columns are shared, and the four rows' block tails, each a chain
// of four dependent divisions, are independent and overlap in the
// out-of-order window. The rows need n ≤ col (entries j < col only read
// rows above col).

// func cholRow4RecipAVX(l *float64, d int, ri *float64, n int, col int)
TEXT ·cholRow4RecipAVX(SB), NOSPLIT, $256-40
	MOVQ l+0(FP), SI
	MOVQ d+8(FP), R8
	SHLQ $3, R8
	MOVQ ri+16(FP), DI
	MOVQ col+32(FP), BX
	XORQ R10, R10

rblock4:
	MOVQ R10, AX
	ADDQ $4, AX
	CMPQ AX, n+24(FP)
	JG   rdone4
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	LEAQ (SI)(R10*8), R11
	MOVQ DI, R12
	LEAQ (DI)(R8*2), R13
	MOVQ R10, DX
	SHRQ $1, DX
	TESTQ DX, DX
	JEQ  rtail4

rprefix4:
	VMOVUPD (R11), Y8
	VMOVUPD (R11)(R8*1), Y9
	VBROADCASTSD (R12), Y10
	VMULPD Y8, Y10, Y10
	VADDPD Y10, Y0, Y0
	VBROADCASTSD 8(R12), Y11
	VMULPD Y9, Y11, Y11
	VADDPD Y11, Y1, Y1
	VBROADCASTSD (R12)(R8*1), Y12
	VMULPD Y8, Y12, Y12
	VADDPD Y12, Y2, Y2
	VBROADCASTSD 8(R12)(R8*1), Y13
	VMULPD Y9, Y13, Y13
	VADDPD Y13, Y3, Y3
	VBROADCASTSD (R13), Y10
	VMULPD Y8, Y10, Y10
	VADDPD Y10, Y4, Y4
	VBROADCASTSD 8(R13), Y11
	VMULPD Y9, Y11, Y11
	VADDPD Y11, Y5, Y5
	VBROADCASTSD (R13)(R8*1), Y12
	VMULPD Y8, Y12, Y12
	VADDPD Y12, Y6, Y6
	VBROADCASTSD 8(R13)(R8*1), Y13
	VMULPD Y9, Y13, Y13
	VADDPD Y13, Y7, Y7
	ADDQ $16, R12
	ADDQ $16, R13
	LEAQ (R11)(R8*2), R11
	DECQ DX
	JNE  rprefix4

rtail4:
	VMOVUPD Y0, 0(SP)
	VMOVUPD Y1, 32(SP)
	VMOVUPD Y2, 64(SP)
	VMOVUPD Y3, 96(SP)
	VMOVUPD Y4, 128(SP)
	VMOVUPD Y5, 160(SP)
	VMOVUPD Y6, 192(SP)
	VMOVUPD Y7, 224(SP)
	MOVQ R10, AX
	IMULQ R8, AX
	ADDQ SI, AX
	LEAQ (AX)(R10*8), R11
	LEAQ (R11)(R8*2), R9
	LEAQ (AX)(BX*8), AX
	LEAQ (AX)(R8*1), CX
	LEAQ (DI)(R10*8), R12
	LEAQ 0(SP), DX
	FULLR(R12, DX, 0)
	ADDQ R8, R12
	LEAQ 64(SP), DX
	FULLR(R12, DX, 8)
	ADDQ R8, R12
	LEAQ 128(SP), DX
	FULLR(R12, DX, 16)
	ADDQ R8, R12
	LEAQ 192(SP), DX
	FULLR(R12, DX, 24)
	ADDQ $4, R10
	JMP  rblock4

rdone4:
	VZEROUPPER
	RET

// cholBackRecipAVX: CholSolveGo's backward substitution, bit for bit. For
// i = d−1 … 0: x_i ← x_i / L_ii, then x_k ← x_k − x_i·L_ik for k < i, four
// lanes at a time then one by one (VMULPD then VSUBPD: per entry the
// reference's x_k + (−x_i)·L_ik, which rounds to the same value). L is
// read from the lower triangle of l.

// func cholBackRecipAVX(l *float64, d int, x *float64)
TEXT ·cholBackRecipAVX(SB), NOSPLIT, $0-24
	MOVQ l+0(FP), SI
	MOVQ d+8(FP), R10
	MOVQ R10, R8
	SHLQ $3, R8
	MOVQ x+16(FP), DI

rback:
	DECQ R10
	JS   rbdone
	MOVQ R10, R11
	IMULQ R8, R11
	ADDQ SI, R11
	VMOVSD (DI)(R10*8), X0
	VMULSD (R11)(R10*8), X0, X0
	VMOVSD X0, (DI)(R10*8)
	VBROADCASTSD X0, Y0
	XORQ R12, R12
	MOVQ R10, R13
	SUBQ $4, R13

rbvec:
	CMPQ R12, R13
	JG   rbscalar
	VMULPD (R11)(R12*8), Y0, Y1
	VMOVUPD (DI)(R12*8), Y2
	VSUBPD Y1, Y2, Y2
	VMOVUPD Y2, (DI)(R12*8)
	ADDQ $4, R12
	JMP  rbvec

rbscalar:
	CMPQ R12, R10
	JGE  rback
	VMULSD (R11)(R12*8), X0, X1
	VMOVSD (DI)(R12*8), X2
	VSUBSD X1, X2, X2
	VMOVSD X2, (DI)(R12*8)
	INCQ R12
	JMP  rbscalar

rbdone:
	VZEROUPPER
	RET

