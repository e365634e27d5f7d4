//go:build !purego

#include "textflag.h"
#include "prefetch_amd64.h"

// AVX2 kernels of the sgd-prev step (pairwise/sgdprev_fast.go; the Go
// references are in ref.go). Each computes, lane
// by lane, the IEEE operations of its Go counterpart in the same order —
// vector lanes round exactly as scalar operations do, and there is no FMA —
// so the results are bit-identical (TestDiffDotMatchesRef, TestUpdateFlushMatchesRef,
// TestPrevStepMatchesRef, TestAddRepeatMatchesRef). The passes
// that diffDotAVX, updateFlushAVX and prevStepAVX share are the macros
// below, each written once; labels are the caller's (they are per TEXT).

// DIFF_DOT: X0 = diffDot(w, a, b) with SI = w, AX = a, BX = b, DX = len(w).
// s0 sums the even terms w[i]·(a[i] − b[i]) and s1 the odd ones, each left
// to right, in X0 = [s0, s1]; an odd last term goes to s0; the result is
// s0 + s1. Clobbers CX, R8, X1, X2.
#define DIFF_DOT(l4, l2, l1, done) \
	XORQ CX, CX; \
	VXORPD X0, X0, X0; \
l4: \
	LEAQ 4(CX), R8; \
	CMPQ R8, DX; \
	JGT  l2; \
	VMOVUPD (AX)(CX*8), Y1; \
	VSUBPD  (BX)(CX*8), Y1, Y1; \
	VMULPD  (SI)(CX*8), Y1, Y1; \
	VADDPD  X1, X0, X0; \
	VEXTRACTF128 $1, Y1, X2; \
	VADDPD  X2, X0, X0; \
	MOVQ R8, CX; \
	JMP  l4; \
l2: \
	LEAQ 2(CX), R8; \
	CMPQ R8, DX; \
	JGT  l1; \
	VMOVUPD (AX)(CX*8), X1; \
	VSUBPD  (BX)(CX*8), X1, X1; \
	VMULPD  (SI)(CX*8), X1, X1; \
	VADDPD  X1, X0, X0; \
	MOVQ R8, CX; \
l1: \
	CMPQ CX, DX; \
	JGE  done; \
	VMOVSD (AX)(CX*8), X1; \
	VSUBSD (BX)(CX*8), X1, X1; \
	VMULSD (SI)(CX*8), X1, X1; \
	VADDSD X1, X0, X0; \
done: \
	VUNPCKHPD X0, X0, X1; \
	VADDSD    X1, X0, X0

// N2_ADD4 adds the four lanes of Y3 to X0 left to right (n2 += v[k]², …,
// v[k+3]²); N2_ADD2 the two lanes of X3. Clobber X3, X4.
#define N2_ADD4 \
	VADDSD  X3, X0, X0; \
	VUNPCKHPD X3, X3, X4; \
	VADDSD  X4, X0, X0; \
	VEXTRACTF128 $1, Y3, X3; \
	VADDSD  X3, X0, X0; \
	VUNPCKHPD X3, X3, X4; \
	VADDSD  X4, X0, X0

#define N2_ADD2 \
	VADDSD  X3, X0, X0; \
	VUNPCKHPD X3, X3, X4; \
	VADDSD  X4, X0, X0

// UPDATE_PASS: the pass of updateFlush (F4, F2, F1 = FLUSH4, FLUSH2,
// FLUSH1) or of denseUpdate (NONE) with DI = w, AX = xi, BX = xj, DX =
// len(w), Y14 = a, and for the flush R9 = sum, R10 = prev, Y13 = pend: v =
// w[k] + a·(xi[k] − xj[k]); the flush's sum[k] += pend·prev[k] (prev read
// before it is overwritten) and prev[k] = v; w[k] = v; X0 = n2 += v² left
// to right. Then it jumps to done. Clobbers CX, R8, Y1–Y4.
#define UPDATE_PASS(l4, l2, l1, done, F4, F2, F1) \
	XORQ CX, CX; \
	VXORPD X0, X0, X0; \
l4: \
	LEAQ 4(CX), R8; \
	CMPQ R8, DX; \
	JGT  l2; \
	VMOVUPD (AX)(CX*8), Y1; \
	VSUBPD  (BX)(CX*8), Y1, Y1; \
	VMULPD  Y14, Y1, Y1; \
	VADDPD  (DI)(CX*8), Y1, Y1; \
	F4; \
	VMOVUPD Y1, (DI)(CX*8); \
	VMULPD  Y1, Y1, Y3; \
	N2_ADD4; \
	MOVQ R8, CX; \
	JMP  l4; \
l2: \
	LEAQ 2(CX), R8; \
	CMPQ R8, DX; \
	JGT  l1; \
	VMOVUPD (AX)(CX*8), X1; \
	VSUBPD  (BX)(CX*8), X1, X1; \
	VMULPD  X14, X1, X1; \
	VADDPD  (DI)(CX*8), X1, X1; \
	F2; \
	VMOVUPD X1, (DI)(CX*8); \
	VMULPD  X1, X1, X3; \
	N2_ADD2; \
	MOVQ R8, CX; \
l1: \
	CMPQ CX, DX; \
	JGE  done; \
	VMOVSD (AX)(CX*8), X1; \
	VSUBSD (BX)(CX*8), X1, X1; \
	VMULSD X14, X1, X1; \
	VADDSD (DI)(CX*8), X1, X1; \
	F1; \
	VMOVSD X1, (DI)(CX*8); \
	VMULSD X1, X1, X3; \
	VADDSD X3, X0, X0; \
	JMP  done

// The flush at 4, 2 and 1 lanes (v in Y1/X1), and no flush.
#define FLUSH4 \
	VMOVUPD (R10)(CX*8), Y2; \
	VMULPD  Y13, Y2, Y2; \
	VADDPD  (R9)(CX*8), Y2, Y2; \
	VMOVUPD Y2, (R9)(CX*8); \
	VMOVUPD Y1, (R10)(CX*8)

#define FLUSH2 \
	VMOVUPD (R10)(CX*8), X2; \
	VMULPD  X13, X2, X2; \
	VADDPD  (R9)(CX*8), X2, X2; \
	VMOVUPD X2, (R9)(CX*8); \
	VMOVUPD X1, (R10)(CX*8)

#define FLUSH1 \
	VMOVSD (R10)(CX*8), X2; \
	VMULSD X13, X2, X2; \
	VADDSD (R9)(CX*8), X2, X2; \
	VMOVSD X2, (R9)(CX*8); \
	VMOVSD X1, (R10)(CX*8)

#define NONE

// PROJECT_TEST: when n2 (X0) > r2, false when either is NaN (JLS: CF or
// ZF set, as for unordered), Y7 = c = r/√n2 broadcast and CX = 0;
// otherwise it jumps to skip. Clobbers X5, X6.
#define PROJECT_TEST(r, r2, skip) \
	VMOVSD r2, X5; \
	UCOMISD X5, X0; \
	JLS  skip; \
	VSQRTSD X0, X0, X6; \
	VMOVSD  r, X7; \
	VDIVSD  X6, X7, X7; \
	VBROADCASTSD X7, Y7; \
	XORQ CX, CX

// SCALE_PASS: w[k] = w[k]·c for k < DX (DI = w, Y7 = c), and with P4, P1
// = PREV4, PREV1 also prev[k] (R10 = prev); then it jumps to done.
// Clobbers CX, R8, Y1.
#define SCALE_PASS(l4, l1, done, P4, P1) \
l4: \
	LEAQ 4(CX), R8; \
	CMPQ R8, DX; \
	JGT  l1; \
	VMULPD  (DI)(CX*8), Y7, Y1; \
	VMOVUPD Y1, (DI)(CX*8); \
	P4; \
	MOVQ R8, CX; \
	JMP  l4; \
l1: \
	CMPQ CX, DX; \
	JGE  done; \
	VMULSD (DI)(CX*8), X7, X1; \
	VMOVSD X1, (DI)(CX*8); \
	P1; \
	INCQ CX; \
	JMP  l1

#define PREV4 VMOVUPD Y1, (R10)(CX*8)
#define PREV1 VMOVSD X1, (R10)(CX*8)

// func diffDotAVX(w, a, b, pa, pb []float64) float64
//
// diffDot (DIFF_DOT), after prefetching the cache lines of pa and pb (the
// rows of a later step), saving the loop two calls to prefetch. len(a),
// len(b) ≥ len(w).
TEXT ·diffDotAVX(SB), NOSPLIT, $0-128
	PREFETCH_LINES(pa_base+72(FP), pa_len+80(FP), 8, pfa, pfb)
	PREFETCH_LINES(pb_base+96(FP), pb_len+104(FP), 8, pfb1, dot)
	MOVQ w_base+0(FP), SI
	MOVQ w_len+8(FP), DX
	MOVQ a_base+24(FP), AX
	MOVQ b_base+48(FP), BX
	DIFF_DOT(dd4, dd2, dd1, dddone)
	VZEROUPPER
	MOVSD X0, ret+120(FP)
	RET

// func updateFlushAVX(w, xi, xj, sum, prev []float64, a, pend, r, r2 float64)
//
// updateFlush: UPDATE_PASS with the flush; then if n2 > r2, c = r/√n2 and w[k] = prev[k]
// = w[k]·c. All slices have length ≥ len(w).
TEXT ·updateFlushAVX(SB), NOSPLIT, $0-152
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), DX
	MOVQ xi_base+24(FP), AX
	MOVQ xj_base+48(FP), BX
	MOVQ sum_base+72(FP), R9
	MOVQ prev_base+96(FP), R10
	VBROADCASTSD a+120(FP), Y14
	VBROADCASTSD pend+128(FP), Y13
	UPDATE_PASS(uf4, uf2, uf1, ufproj, FLUSH4, FLUSH2, FLUSH1)

ufproj:
	PROJECT_TEST(r+136(FP), r2+144(FP), ufdone)
	SCALE_PASS(us4, us1, ufdone, PREV4, PREV1)

ufdone:
	VZEROUPPER
	RET

// func prevStepAVX(p *prevStepArgs) bool
//
// One active step of the hinge or square loss in one call: prefetch the
// rows pa and pb; h = diffDot(w, xi, xj) (DIFF_DOT); m = 1 − s·h, and
// dv = −s when !(m ≤ 0) (hinge), dv = −2·s·(1 − s·h) (square); if dv ≠ 0
// (NaN included, as in Go), a = (−η)·dv and the update of updateFlushAVX
// (flush = 1) or of denseUpdate (flush = 0: w only), and it returns true.
// Field offsets: PrevStepArgs in ref.go (TestPrevStepArgsLayout).
TEXT ·prevStepAVX(SB), NOSPLIT, $0-9
	MOVQ p+0(FP), R11
	PREFETCH_LINES(24(R11), 64(R11), 8, spfa, spfb)
	PREFETCH_LINES(32(R11), 64(R11), 8, spfb1, sdot)
	MOVQ 0(R11), SI  // w
	MOVQ 8(R11), AX  // xi
	MOVQ 16(R11), BX // xj
	MOVQ 56(R11), DX // n
	DIFF_DOT(sd4, sd2, sd1, sddone) // X0 = h
	// the loss: X12 = dv
	VMOVSD 72(R11), X8   // s
	VMULSD X0, X8, X9    // s·h
	MOVQ   $0x3ff0000000000000, R9
	VMOVQ  R9, X10       // 1
	VSUBSD X9, X10, X10  // 1 − s·h
	VXORPD X11, X11, X11 // 0
	MOVQ   $0x8000000000000000, R9
	VMOVQ  R9, X7        // the sign bit
	CMPQ   112(R11), $0
	JNE    ssquare
	UCOMISD X11, X10     // m against 0
	JPS    shinge        // NaN: !(m ≤ 0)
	JLS    snone         // m ≤ 0: no step

shinge:
	VXORPD X7, X8, X12 // dv = −s
	JMP    supdate

ssquare:
	MOVQ   $0xc000000000000000, R9
	VMOVQ  R9, X12        // −2
	VMULSD X8, X12, X12   // −2·s
	VMULSD X10, X12, X12  // (−2·s)·(1 − s·h)
	UCOMISD X11, X12
	JPS    supdate        // NaN ≠ 0
	JEQ    snone          // dv = 0 (either sign)

supdate:
	VMOVSD 80(R11), X13
	VXORPD X7, X13, X13  // −η
	VMULSD X12, X13, X13 // a = (−η)·dv
	VBROADCASTSD X13, Y14
	VBROADCASTSD 88(R11), Y13 // pend
	MOVQ 0(R11), DI      // w
	MOVQ 8(R11), AX      // xi
	MOVQ 16(R11), BX     // xj
	MOVQ 40(R11), R9     // sum
	MOVQ 48(R11), R10    // prev
	MOVQ 56(R11), DX     // n
	CMPQ 120(R11), $0
	JEQ  snoflush
	UPDATE_PASS(sf4, sf2, sf1, sproj, FLUSH4, FLUSH2, FLUSH1)

snoflush:
	UPDATE_PASS(nf4, nf2, nf1, sproj, NONE, NONE, NONE)

sproj:
	PROJECT_TEST(96(R11), 104(R11), sdone)
	CMPQ 120(R11), $0
	JEQ  sscale
	SCALE_PASS(ss4, ss1, sdone, PREV4, PREV1)

sscale:
	SCALE_PASS(ns4, ns1, sdone, NONE, NONE)

sdone:
	VZEROUPPER
	MOVB $1, ret+8(FP)
	RET

snone:
	VZEROUPPER
	MOVB $0, ret+8(FP)
	RET

// Chunk loads and stores of addRepeatAVX: lanes off/8 … off/8 + 3 of the
// chunk at DI (sum) and SI (w). The masked forms read their mask at
// off(R11) into Y15 (loads; the last load may replace it, as it is read
// first) or Y8 (stores; w's registers are free by then).
#define AR_LOAD(off, acc, wr) \
	VMOVUPD off(DI), acc; \
	VMOVUPD off(SI), wr

#define AR_STORE(off, acc) \
	VMOVUPD acc, off(DI)

#define AR_LOAD_MASKED(off, acc, wr) \
	VMOVDQU    off(R11), Y15; \
	VMASKMOVPD off(DI), Y15, acc; \
	VMASKMOVPD off(SI), Y15, wr

#define AR_STORE_MASKED(off, acc) \
	VMOVDQU    off(R11), Y8; \
	VMASKMOVPD acc, Y8, off(DI)

// func addRepeatAVX(sum, w []float64, m int)
//
// addRepeat: m times, sum[k] += w[k] for every k < len(w) (m ≥ 1; sum has
// length ≥ len(w)). Each lane's m additions are a chain of IEEE additions
// in order, as the Go loop's, so the results are bit-identical. Lanes are
// taken 32 at a time in Y0–Y7 (sum) and Y8–Y15 (w), which the m
// repetitions never leave. In the last chunk, when it is partial, the lanes
// past len(w) are masked out of the loads (read as 0, never fault) and of
// the stores (never written), the masks read from addRepeatMask<> at
// 32 − rest qwords: 32 all-ones qwords then 32 zero ones. Eight
// independent chains of 4-cycle additions keep both adders busy: a
// repetition costs ≈ 4 cycles for d ≤ 32.
TEXT ·addRepeatAVX(SB), NOSPLIT, $0-56
	MOVQ sum_base+0(FP), DI
	MOVQ w_base+24(FP), SI
	MOVQ w_len+32(FP), DX // lanes left
	MOVQ m+48(FP), CX
	TESTQ CX, CX
	JLE  ardone

archunk:
	TESTQ DX, DX
	JLE   ardone
	CMPQ  DX, $32
	JLT   armasked

	// a full chunk: plain loads and stores
	AR_LOAD(0, Y0, Y8)
	AR_LOAD(32, Y1, Y9)
	AR_LOAD(64, Y2, Y10)
	AR_LOAD(96, Y3, Y11)
	AR_LOAD(128, Y4, Y12)
	AR_LOAD(160, Y5, Y13)
	AR_LOAD(192, Y6, Y14)
	AR_LOAD(224, Y7, Y15)
	XORQ R12, R12 // full
	JMP  arreps

arfull:
	AR_STORE(0, Y0)
	AR_STORE(32, Y1)
	AR_STORE(64, Y2)
	AR_STORE(96, Y3)
	AR_STORE(128, Y4)
	AR_STORE(160, Y5)
	AR_STORE(192, Y6)
	AR_STORE(224, Y7)
	ADDQ $256, DI
	ADDQ $256, SI
	SUBQ $32, DX
	JMP  archunk

armasked:
	// the last, partial chunk: rest < 32 lanes
	MOVQ $32, R8
	SUBQ DX, R8
	LEAQ addRepeatMask<>(SB), R11
	LEAQ (R11)(R8*8), R11 // the chunk's 32 mask qwords
	AR_LOAD_MASKED(0, Y0, Y8)
	AR_LOAD_MASKED(32, Y1, Y9)
	AR_LOAD_MASKED(64, Y2, Y10)
	AR_LOAD_MASKED(96, Y3, Y11)
	AR_LOAD_MASKED(128, Y4, Y12)
	AR_LOAD_MASKED(160, Y5, Y13)
	AR_LOAD_MASKED(192, Y6, Y14)
	AR_LOAD_MASKED(224, Y7, Y15)
	MOVQ $1, R12 // masked

arreps:
	MOVQ CX, R10

arrep:
	VADDPD Y8, Y0, Y0
	VADDPD Y9, Y1, Y1
	VADDPD Y10, Y2, Y2
	VADDPD Y11, Y3, Y3
	VADDPD Y12, Y4, Y4
	VADDPD Y13, Y5, Y5
	VADDPD Y14, Y6, Y6
	VADDPD Y15, Y7, Y7
	DECQ   R10
	JNZ    arrep
	TESTQ  R12, R12
	JZ     arfull
	AR_STORE_MASKED(0, Y0)
	AR_STORE_MASKED(32, Y1)
	AR_STORE_MASKED(64, Y2)
	AR_STORE_MASKED(96, Y3)
	AR_STORE_MASKED(128, Y4)
	AR_STORE_MASKED(160, Y5)
	AR_STORE_MASKED(192, Y6)
	AR_STORE_MASKED(224, Y7)

ardone:
	VZEROUPPER
	RET

DATA addRepeatMask<>+0(SB)/8, $-1
DATA addRepeatMask<>+8(SB)/8, $-1
DATA addRepeatMask<>+16(SB)/8, $-1
DATA addRepeatMask<>+24(SB)/8, $-1
DATA addRepeatMask<>+32(SB)/8, $-1
DATA addRepeatMask<>+40(SB)/8, $-1
DATA addRepeatMask<>+48(SB)/8, $-1
DATA addRepeatMask<>+56(SB)/8, $-1
DATA addRepeatMask<>+64(SB)/8, $-1
DATA addRepeatMask<>+72(SB)/8, $-1
DATA addRepeatMask<>+80(SB)/8, $-1
DATA addRepeatMask<>+88(SB)/8, $-1
DATA addRepeatMask<>+96(SB)/8, $-1
DATA addRepeatMask<>+104(SB)/8, $-1
DATA addRepeatMask<>+112(SB)/8, $-1
DATA addRepeatMask<>+120(SB)/8, $-1
DATA addRepeatMask<>+128(SB)/8, $-1
DATA addRepeatMask<>+136(SB)/8, $-1
DATA addRepeatMask<>+144(SB)/8, $-1
DATA addRepeatMask<>+152(SB)/8, $-1
DATA addRepeatMask<>+160(SB)/8, $-1
DATA addRepeatMask<>+168(SB)/8, $-1
DATA addRepeatMask<>+176(SB)/8, $-1
DATA addRepeatMask<>+184(SB)/8, $-1
DATA addRepeatMask<>+192(SB)/8, $-1
DATA addRepeatMask<>+200(SB)/8, $-1
DATA addRepeatMask<>+208(SB)/8, $-1
DATA addRepeatMask<>+216(SB)/8, $-1
DATA addRepeatMask<>+224(SB)/8, $-1
DATA addRepeatMask<>+232(SB)/8, $-1
DATA addRepeatMask<>+240(SB)/8, $-1
DATA addRepeatMask<>+248(SB)/8, $-1
DATA addRepeatMask<>+256(SB)/8, $0
DATA addRepeatMask<>+264(SB)/8, $0
DATA addRepeatMask<>+272(SB)/8, $0
DATA addRepeatMask<>+280(SB)/8, $0
DATA addRepeatMask<>+288(SB)/8, $0
DATA addRepeatMask<>+296(SB)/8, $0
DATA addRepeatMask<>+304(SB)/8, $0
DATA addRepeatMask<>+312(SB)/8, $0
DATA addRepeatMask<>+320(SB)/8, $0
DATA addRepeatMask<>+328(SB)/8, $0
DATA addRepeatMask<>+336(SB)/8, $0
DATA addRepeatMask<>+344(SB)/8, $0
DATA addRepeatMask<>+352(SB)/8, $0
DATA addRepeatMask<>+360(SB)/8, $0
DATA addRepeatMask<>+368(SB)/8, $0
DATA addRepeatMask<>+376(SB)/8, $0
DATA addRepeatMask<>+384(SB)/8, $0
DATA addRepeatMask<>+392(SB)/8, $0
DATA addRepeatMask<>+400(SB)/8, $0
DATA addRepeatMask<>+408(SB)/8, $0
DATA addRepeatMask<>+416(SB)/8, $0
DATA addRepeatMask<>+424(SB)/8, $0
DATA addRepeatMask<>+432(SB)/8, $0
DATA addRepeatMask<>+440(SB)/8, $0
DATA addRepeatMask<>+448(SB)/8, $0
DATA addRepeatMask<>+456(SB)/8, $0
DATA addRepeatMask<>+464(SB)/8, $0
DATA addRepeatMask<>+472(SB)/8, $0
DATA addRepeatMask<>+480(SB)/8, $0
DATA addRepeatMask<>+488(SB)/8, $0
DATA addRepeatMask<>+496(SB)/8, $0
DATA addRepeatMask<>+504(SB)/8, $0
GLOBL addRepeatMask<>(SB), RODATA|NOPTR, $512
