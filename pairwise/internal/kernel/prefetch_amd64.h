// PREFETCH_LINES(base, n, size, loop, done) issues PREFETCHT0 for every
// cache line of the n elements of size bytes (1, 2, 4 or 8) at base (a
// hint: it never faults and changes no result). It clobbers AX and CX;
// loop and done are the caller's labels.
#define PREFETCH_LINES(base, n, size, loop, done) \
	MOVQ base, AX; \
	MOVQ n, CX; \
	LEAQ (AX)(CX*size), CX; \
	ANDQ $~63, AX; \
loop: \
	CMPQ AX, CX; \
	JGE  done; \
	PREFETCHT0 (AX); \
	ADDQ $64, AX; \
	JMP  loop; \
done:
