#include "textflag.h"

// AVX2 kernels of the sgd-prev step (sgdprev_fast.go). Each computes, lane
// by lane, the IEEE operations of its Go counterpart in the same order —
// vector lanes round exactly as scalar operations do, and there is no FMA —
// so the results are bit-identical (TestPrevKernelsMatchGo).

// func diffDotAVX(w, a, b, pa, pb []float64) float64
//
// diffDot: s0 sums the even terms w[i]·(a[i] − b[i]) and s1 the odd ones,
// each left to right, in X0 = [s0, s1]; an odd last term goes to s0; the
// result is s0 + s1. len(a), len(b) ≥ len(w). First it prefetches the
// cache lines of pa and pb (PREFETCHT0, a hint that never faults: the rows
// of a later step), saving the loop two calls to prefetch.
TEXT ·diffDotAVX(SB), NOSPLIT, $0-128
	MOVQ pa_base+72(FP), AX
	MOVQ pa_len+80(FP), CX
	LEAQ (AX)(CX*8), CX
	ANDQ $~63, AX

pfa:
	CMPQ AX, CX
	JGE  pfb
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP  pfa

pfb:
	MOVQ pb_base+96(FP), AX
	MOVQ pb_len+104(FP), CX
	LEAQ (AX)(CX*8), CX
	ANDQ $~63, AX

pfb1:
	CMPQ AX, CX
	JGE  dot
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP  pfb1

dot:
	MOVQ w_base+0(FP), SI
	MOVQ w_len+8(FP), DX
	MOVQ a_base+24(FP), AX
	MOVQ b_base+48(FP), BX
	XORQ CX, CX
	VXORPD X0, X0, X0

dd4:
	LEAQ 4(CX), R8
	CMPQ R8, DX
	JGT  dd2
	VMOVUPD (AX)(CX*8), Y1
	VSUBPD  (BX)(CX*8), Y1, Y1 // a − b
	VMULPD  (SI)(CX*8), Y1, Y1 // w·(a − b)
	VADDPD  X1, X0, X0         // s0 += term i, s1 += term i+1
	VEXTRACTF128 $1, Y1, X2
	VADDPD  X2, X0, X0         // s0 += term i+2, s1 += term i+3
	MOVQ R8, CX
	JMP  dd4

dd2:
	LEAQ 2(CX), R8
	CMPQ R8, DX
	JGT  dd1
	VMOVUPD (AX)(CX*8), X1
	VSUBPD  (BX)(CX*8), X1, X1
	VMULPD  (SI)(CX*8), X1, X1
	VADDPD  X1, X0, X0
	MOVQ R8, CX

dd1:
	CMPQ CX, DX
	JGE  dddone
	VMOVSD (AX)(CX*8), X1
	VSUBSD (BX)(CX*8), X1, X1
	VMULSD (SI)(CX*8), X1, X1
	VADDSD X1, X0, X0 // s0 += the last term; s1 stays in the high lane

dddone:
	VUNPCKHPD X0, X0, X1 // s1
	VADDSD    X1, X0, X0 // s0 + s1
	VZEROUPPER
	MOVSD X0, ret+120(FP)
	RET

// func updateFlushAVX(w, xi, xj, sum, prev []float64, a, pend, r, r2 float64)
//
// updateFlush: for each k, v = w[k] + a·(xi[k] − xj[k]); sum[k] += pend·prev[k];
// w[k] = prev[k] = v; n2 += v² left to right (the serial ‖w‖²); then if
// n2 > r2, c = r/√n2 and w[k] = prev[k] = w[k]·c. All slices have length
// ≥ len(w).
TEXT ·updateFlushAVX(SB), NOSPLIT, $0-152
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), DX
	MOVQ xi_base+24(FP), AX
	MOVQ xj_base+48(FP), BX
	MOVQ sum_base+72(FP), R9
	MOVQ prev_base+96(FP), R10
	VBROADCASTSD a+120(FP), Y14
	VBROADCASTSD pend+128(FP), Y13
	XORQ CX, CX
	VXORPD X0, X0, X0 // n2

uf4:
	LEAQ 4(CX), R8
	CMPQ R8, DX
	JGT  uf2
	VMOVUPD (AX)(CX*8), Y1
	VSUBPD  (BX)(CX*8), Y1, Y1  // xi − xj
	VMULPD  Y14, Y1, Y1         // a·(xi − xj)
	VADDPD  (DI)(CX*8), Y1, Y1  // v = w + a·(xi − xj)
	VMOVUPD (R10)(CX*8), Y2     // prev (before it is overwritten)
	VMULPD  Y13, Y2, Y2         // pend·prev
	VADDPD  (R9)(CX*8), Y2, Y2  // sum + pend·prev
	VMOVUPD Y2, (R9)(CX*8)
	VMOVUPD Y1, (DI)(CX*8)
	VMOVUPD Y1, (R10)(CX*8)
	VMULPD  Y1, Y1, Y3          // v²
	VADDSD  X3, X0, X0          // n2 += v[k]²
	VUNPCKHPD X3, X3, X4
	VADDSD  X4, X0, X0          // n2 += v[k+1]²
	VEXTRACTF128 $1, Y3, X3
	VADDSD  X3, X0, X0          // n2 += v[k+2]²
	VUNPCKHPD X3, X3, X4
	VADDSD  X4, X0, X0          // n2 += v[k+3]²
	MOVQ R8, CX
	JMP  uf4

uf2:
	LEAQ 2(CX), R8
	CMPQ R8, DX
	JGT  uf1
	VMOVUPD (AX)(CX*8), X1
	VSUBPD  (BX)(CX*8), X1, X1
	VMULPD  X14, X1, X1
	VADDPD  (DI)(CX*8), X1, X1
	VMOVUPD (R10)(CX*8), X2
	VMULPD  X13, X2, X2
	VADDPD  (R9)(CX*8), X2, X2
	VMOVUPD X2, (R9)(CX*8)
	VMOVUPD X1, (DI)(CX*8)
	VMOVUPD X1, (R10)(CX*8)
	VMULPD  X1, X1, X3
	VADDSD  X3, X0, X0
	VUNPCKHPD X3, X3, X4
	VADDSD  X4, X0, X0
	MOVQ R8, CX

uf1:
	CMPQ CX, DX
	JGE  ufproj
	VMOVSD (AX)(CX*8), X1
	VSUBSD (BX)(CX*8), X1, X1
	VMULSD X14, X1, X1
	VADDSD (DI)(CX*8), X1, X1
	VMOVSD (R10)(CX*8), X2
	VMULSD X13, X2, X2
	VADDSD (R9)(CX*8), X2, X2
	VMOVSD X2, (R9)(CX*8)
	VMOVSD X1, (DI)(CX*8)
	VMOVSD X1, (R10)(CX*8)
	VMULSD X1, X1, X3
	VADDSD X3, X0, X0

ufproj:
	// n2 > r2, false when either is NaN (JLS: CF or ZF set, as for unordered)
	VMOVSD r2+144(FP), X5
	UCOMISD X5, X0
	JLS  ufdone
	VSQRTSD X0, X0, X6
	VMOVSD  r+136(FP), X7
	VDIVSD  X6, X7, X7 // c = r/√n2
	VBROADCASTSD X7, Y7
	XORQ CX, CX

us4:
	LEAQ 4(CX), R8
	CMPQ R8, DX
	JGT  us1
	VMULPD  (DI)(CX*8), Y7, Y1
	VMOVUPD Y1, (DI)(CX*8)
	VMOVUPD Y1, (R10)(CX*8)
	MOVQ R8, CX
	JMP  us4

us1:
	CMPQ CX, DX
	JGE  ufdone
	VMULSD (DI)(CX*8), X7, X1
	VMOVSD X1, (DI)(CX*8)
	VMOVSD X1, (R10)(CX*8)
	INCQ CX
	JMP  us1

ufdone:
	VZEROUPPER
	RET

// func prevStepAVX(p *prevStepArgs) bool
//
// One active step of the hinge or square loss in one call: prefetch the
// rows pa and pb; h = diffDot(w, xi, xj) as diffDotAVX; m = 1 − s·h, and
// dv = −s when !(m ≤ 0) (hinge), dv = −2·s·(1 − s·h) (square); if dv ≠ 0
// (NaN included, as in Go), a = (−η)·dv and the update of updateFlushAVX
// (flush = 1) or of denseUpdate (flush = 0: w only), and it returns true.
// Field offsets: prevStepArgs in sgdprev_amd64.go.
TEXT ·prevStepAVX(SB), NOSPLIT, $0-9
	MOVQ p+0(FP), R11

	// prefetch pa and pb (plen elements each)
	MOVQ 24(R11), AX
	MOVQ 64(R11), CX
	LEAQ (AX)(CX*8), CX
	ANDQ $~63, AX

spfa:
	CMPQ AX, CX
	JGE  spfb
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP  spfa

spfb:
	MOVQ 32(R11), AX
	MOVQ 64(R11), CX
	LEAQ (AX)(CX*8), CX
	ANDQ $~63, AX

spfb1:
	CMPQ AX, CX
	JGE  sdot
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP  spfb1

sdot:
	MOVQ 0(R11), SI  // w
	MOVQ 8(R11), AX  // xi
	MOVQ 16(R11), BX // xj
	MOVQ 56(R11), DX // n
	XORQ CX, CX
	VXORPD X0, X0, X0

sd4:
	LEAQ 4(CX), R8
	CMPQ R8, DX
	JGT  sd2
	VMOVUPD (AX)(CX*8), Y1
	VSUBPD  (BX)(CX*8), Y1, Y1
	VMULPD  (SI)(CX*8), Y1, Y1
	VADDPD  X1, X0, X0
	VEXTRACTF128 $1, Y1, X2
	VADDPD  X2, X0, X0
	MOVQ R8, CX
	JMP  sd4

sd2:
	LEAQ 2(CX), R8
	CMPQ R8, DX
	JGT  sd1
	VMOVUPD (AX)(CX*8), X1
	VSUBPD  (BX)(CX*8), X1, X1
	VMULPD  (SI)(CX*8), X1, X1
	VADDPD  X1, X0, X0
	MOVQ R8, CX

sd1:
	CMPQ CX, DX
	JGE  sddone
	VMOVSD (AX)(CX*8), X1
	VSUBSD (BX)(CX*8), X1, X1
	VMULSD (SI)(CX*8), X1, X1
	VADDSD X1, X0, X0

sddone:
	VUNPCKHPD X0, X0, X1
	VADDSD    X1, X0, X0 // h

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
	XORQ CX, CX
	VXORPD X0, X0, X0    // n2
	CMPQ 120(R11), $0
	JEQ  nf4

sf4:
	LEAQ 4(CX), R8
	CMPQ R8, DX
	JGT  sf2
	VMOVUPD (AX)(CX*8), Y1
	VSUBPD  (BX)(CX*8), Y1, Y1
	VMULPD  Y14, Y1, Y1
	VADDPD  (DI)(CX*8), Y1, Y1
	VMOVUPD (R10)(CX*8), Y2
	VMULPD  Y13, Y2, Y2
	VADDPD  (R9)(CX*8), Y2, Y2
	VMOVUPD Y2, (R9)(CX*8)
	VMOVUPD Y1, (DI)(CX*8)
	VMOVUPD Y1, (R10)(CX*8)
	VMULPD  Y1, Y1, Y3
	VADDSD  X3, X0, X0
	VUNPCKHPD X3, X3, X4
	VADDSD  X4, X0, X0
	VEXTRACTF128 $1, Y3, X3
	VADDSD  X3, X0, X0
	VUNPCKHPD X3, X3, X4
	VADDSD  X4, X0, X0
	MOVQ R8, CX
	JMP  sf4

sf2:
	LEAQ 2(CX), R8
	CMPQ R8, DX
	JGT  sf1
	VMOVUPD (AX)(CX*8), X1
	VSUBPD  (BX)(CX*8), X1, X1
	VMULPD  X14, X1, X1
	VADDPD  (DI)(CX*8), X1, X1
	VMOVUPD (R10)(CX*8), X2
	VMULPD  X13, X2, X2
	VADDPD  (R9)(CX*8), X2, X2
	VMOVUPD X2, (R9)(CX*8)
	VMOVUPD X1, (DI)(CX*8)
	VMOVUPD X1, (R10)(CX*8)
	VMULPD  X1, X1, X3
	VADDSD  X3, X0, X0
	VUNPCKHPD X3, X3, X4
	VADDSD  X4, X0, X0
	MOVQ R8, CX

sf1:
	CMPQ CX, DX
	JGE  sproj
	VMOVSD (AX)(CX*8), X1
	VSUBSD (BX)(CX*8), X1, X1
	VMULSD X14, X1, X1
	VADDSD (DI)(CX*8), X1, X1
	VMOVSD (R10)(CX*8), X2
	VMULSD X13, X2, X2
	VADDSD (R9)(CX*8), X2, X2
	VMOVSD X2, (R9)(CX*8)
	VMOVSD X1, (DI)(CX*8)
	VMOVSD X1, (R10)(CX*8)
	VMULSD X1, X1, X3
	VADDSD X3, X0, X0
	JMP  sproj

nf4:
	LEAQ 4(CX), R8
	CMPQ R8, DX
	JGT  nf2
	VMOVUPD (AX)(CX*8), Y1
	VSUBPD  (BX)(CX*8), Y1, Y1
	VMULPD  Y14, Y1, Y1
	VADDPD  (DI)(CX*8), Y1, Y1
	VMOVUPD Y1, (DI)(CX*8)
	VMULPD  Y1, Y1, Y3
	VADDSD  X3, X0, X0
	VUNPCKHPD X3, X3, X4
	VADDSD  X4, X0, X0
	VEXTRACTF128 $1, Y3, X3
	VADDSD  X3, X0, X0
	VUNPCKHPD X3, X3, X4
	VADDSD  X4, X0, X0
	MOVQ R8, CX
	JMP  nf4

nf2:
	LEAQ 2(CX), R8
	CMPQ R8, DX
	JGT  nf1
	VMOVUPD (AX)(CX*8), X1
	VSUBPD  (BX)(CX*8), X1, X1
	VMULPD  X14, X1, X1
	VADDPD  (DI)(CX*8), X1, X1
	VMOVUPD X1, (DI)(CX*8)
	VMULPD  X1, X1, X3
	VADDSD  X3, X0, X0
	VUNPCKHPD X3, X3, X4
	VADDSD  X4, X0, X0
	MOVQ R8, CX

nf1:
	CMPQ CX, DX
	JGE  sproj
	VMOVSD (AX)(CX*8), X1
	VSUBSD (BX)(CX*8), X1, X1
	VMULSD X14, X1, X1
	VADDSD (DI)(CX*8), X1, X1
	VMOVSD X1, (DI)(CX*8)
	VMULSD X1, X1, X3
	VADDSD X3, X0, X0

sproj:
	VMOVSD 104(R11), X5 // r2
	UCOMISD X5, X0
	JLS  sdone
	VSQRTSD X0, X0, X6
	VMOVSD  96(R11), X7 // r
	VDIVSD  X6, X7, X7  // c = r/√n2
	VBROADCASTSD X7, Y7
	XORQ CX, CX
	CMPQ 120(R11), $0
	JEQ  ns4

ss4:
	LEAQ 4(CX), R8
	CMPQ R8, DX
	JGT  ss1
	VMULPD  (DI)(CX*8), Y7, Y1
	VMOVUPD Y1, (DI)(CX*8)
	VMOVUPD Y1, (R10)(CX*8)
	MOVQ R8, CX
	JMP  ss4

ss1:
	CMPQ CX, DX
	JGE  sdone
	VMULSD (DI)(CX*8), X7, X1
	VMOVSD X1, (DI)(CX*8)
	VMOVSD X1, (R10)(CX*8)
	INCQ CX
	JMP  ss1

ns4:
	LEAQ 4(CX), R8
	CMPQ R8, DX
	JGT  ns1
	VMULPD  (DI)(CX*8), Y7, Y1
	VMOVUPD Y1, (DI)(CX*8)
	MOVQ R8, CX
	JMP  ns4

ns1:
	CMPQ CX, DX
	JGE  sdone
	VMULSD (DI)(CX*8), X7, X1
	VMOVSD X1, (DI)(CX*8)
	INCQ CX
	JMP  ns1

sdone:
	VZEROUPPER
	MOVB $1, ret+8(FP)
	RET

snone:
	VZEROUPPER
	MOVB $0, ret+8(FP)
	RET

// func addRepeatAVX(sum, w []float64, m int)
//
// addRepeat: m times, sum[k] += w[k] for every k < len(w) (m ≥ 1; sum has
// length ≥ len(w)). Each lane's m additions are a chain of IEEE additions
// in order, as the Go loop's, so the results are bit-identical. Lanes are
// taken 32 at a time in Y0–Y7 (sum) and Y8–Y15 (w), which the m
// repetitions never leave. In the last chunk, when it is partial, the lanes
// past len(w) are masked out of the loads (read as 0, never fault) and of
// the stores (never written), the masks read from addRepeatMask<> at
// 32 − rest qwords: 32 all-ones qwords then 32 zero ones. Eight independent chains of 4-cycle additions
// keep both adders busy: a repetition costs ≈ 4 cycles for d ≤ 32.
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
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	VMOVUPD 128(DI), Y4
	VMOVUPD 160(DI), Y5
	VMOVUPD 192(DI), Y6
	VMOVUPD 224(DI), Y7
	VMOVUPD 0(SI), Y8
	VMOVUPD 32(SI), Y9
	VMOVUPD 64(SI), Y10
	VMOVUPD 96(SI), Y11
	VMOVUPD 128(SI), Y12
	VMOVUPD 160(SI), Y13
	VMOVUPD 192(SI), Y14
	VMOVUPD 224(SI), Y15
	XORQ    R12, R12 // full
	JMP     arreps

arfull:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPD Y4, 128(DI)
	VMOVUPD Y5, 160(DI)
	VMOVUPD Y6, 192(DI)
	VMOVUPD Y7, 224(DI)
	ADDQ    $256, DI
	ADDQ    $256, SI
	SUBQ    $32, DX
	JMP     archunk

armasked:
	// the last, partial chunk: r = rest < 32 lanes
	MOVQ  $32, R8
	SUBQ  DX, R8
	LEAQ  addRepeatMask<>(SB), R11
	LEAQ  (R11)(R8*8), R11 // the chunk's 32 mask qwords

	VMOVDQU    0(R11), Y15
	VMASKMOVPD 0(DI), Y15, Y0
	VMASKMOVPD 0(SI), Y15, Y8
	VMOVDQU    32(R11), Y15
	VMASKMOVPD 32(DI), Y15, Y1
	VMASKMOVPD 32(SI), Y15, Y9
	VMOVDQU    64(R11), Y15
	VMASKMOVPD 64(DI), Y15, Y2
	VMASKMOVPD 64(SI), Y15, Y10
	VMOVDQU    96(R11), Y15
	VMASKMOVPD 96(DI), Y15, Y3
	VMASKMOVPD 96(SI), Y15, Y11
	VMOVDQU    128(R11), Y15
	VMASKMOVPD 128(DI), Y15, Y4
	VMASKMOVPD 128(SI), Y15, Y12
	VMOVDQU    160(R11), Y15
	VMASKMOVPD 160(DI), Y15, Y5
	VMASKMOVPD 160(SI), Y15, Y13
	VMOVDQU    192(R11), Y15
	VMASKMOVPD 192(DI), Y15, Y6
	VMASKMOVPD 192(SI), Y15, Y14
	VMOVDQU    224(R11), Y15
	VMASKMOVPD 224(DI), Y15, Y7
	VMASKMOVPD 224(SI), Y15, Y15 // the mask is read before it is replaced
	MOVQ       $1, R12           // masked

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

	VMOVDQU    0(R11), Y8
	VMASKMOVPD Y0, Y8, 0(DI)
	VMOVDQU    32(R11), Y8
	VMASKMOVPD Y1, Y8, 32(DI)
	VMOVDQU    64(R11), Y8
	VMASKMOVPD Y2, Y8, 64(DI)
	VMOVDQU    96(R11), Y8
	VMASKMOVPD Y3, Y8, 96(DI)
	VMOVDQU    128(R11), Y8
	VMASKMOVPD Y4, Y8, 128(DI)
	VMOVDQU    160(R11), Y8
	VMASKMOVPD Y5, Y8, 160(DI)
	VMOVDQU    192(R11), Y8
	VMASKMOVPD Y6, Y8, 192(DI)
	VMOVDQU    224(R11), Y8
	VMASKMOVPD Y7, Y8, 224(DI)

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
