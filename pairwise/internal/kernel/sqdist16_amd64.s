//go:build !purego

#include "textflag.h"

// sqDist16BoundAVX: SqDist16BoundGo (sqdist16.go) with the sixteen lanes
// in four YMM accumulators. Per coordinate a: e = q_a − x (VSUBPD), e·e
// (VMULPD), s += e² (VADDPD) — the reference's IEEE operations in its
// order, lane by lane, no FMA — so the sums are bit-identical
// (TestSqDist16BoundMatchesRef). The early stop is the reference's: after
// every fourth coordinate with coordinates left, all sixteen s > bound
// (VCMPPD GT_OQ). The mask returned has bit l set when !(s_l > bound)
// (VCMPPD NGT_UQ, four VMOVMSKPD): the lanes a caller keeping distances
// ≤ bound has to look at.

// func sqDist16BoundAVX(q, blk []float64, bound float64, out *[16]float64) uint32
TEXT ·sqDist16BoundAVX(SB), NOSPLIT, $0-68
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), CX
	MOVQ blk_base+24(FP), DI
	VBROADCASTSD bound+48(FP), Y15
	MOVQ out+56(FP), DX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ $4, R8
	TESTQ CX, CX
	JEQ done

loop:
	VBROADCASTSD (SI), Y4
	VSUBPD 0(DI), Y4, Y5
	VSUBPD 32(DI), Y4, Y6
	VSUBPD 64(DI), Y4, Y7
	VSUBPD 96(DI), Y4, Y8
	VMULPD Y5, Y5, Y5
	VMULPD Y6, Y6, Y6
	VMULPD Y7, Y7, Y7
	VMULPD Y8, Y8, Y8
	VADDPD Y5, Y0, Y0
	VADDPD Y6, Y1, Y1
	VADDPD Y7, Y2, Y2
	VADDPD Y8, Y3, Y3
	ADDQ $8, SI
	ADDQ $128, DI
	DECQ CX
	JEQ  done
	DECQ R8
	JNE  loop
	MOVQ $4, R8
	VCMPPD $0x1e, Y15, Y0, Y9
	VCMPPD $0x1e, Y15, Y1, Y10
	VCMPPD $0x1e, Y15, Y2, Y11
	VCMPPD $0x1e, Y15, Y3, Y12
	VANDPD Y10, Y9, Y9
	VANDPD Y12, Y11, Y11
	VANDPD Y11, Y9, Y9
	VMOVMSKPD Y9, AX
	CMPQ AX, $15
	JNE  loop

done:
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VCMPPD $0x1a, Y15, Y0, Y9
	VCMPPD $0x1a, Y15, Y1, Y10
	VCMPPD $0x1a, Y15, Y2, Y11
	VCMPPD $0x1a, Y15, Y3, Y12
	VMOVMSKPD Y9, AX
	VMOVMSKPD Y10, BX
	VMOVMSKPD Y11, R9
	VMOVMSKPD Y12, R10
	SHLQ $4, BX
	SHLQ $8, R9
	SHLQ $12, R10
	ORQ  BX, AX
	ORQ  R10, R9
	ORQ  R9, AX
	MOVL AX, ret+64(FP)
	VZEROUPPER
	RET
