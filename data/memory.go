package data

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ulikunitz/xz/lzma"
)

// ErrMemory is wrapped by the error returned when a dataset would need
// more memory than Options.MaxMemory.
var ErrMemory = errors.New("over the memory limit")

// DefaultMaxMemoryCap is the largest default memory budget of one dataset
// (4 GiB); see DefaultMaxMemory.
const DefaultMaxMemoryCap int64 = 4 << 30

// vectorsPerFeature is how many float64 vectors of length D the budget
// must hold besides the records, for a dataset of D features to be
// accepted: the learners, scalers and aggregators that follow the loader
// keep a handful of per-feature vectors each (a model, its gradient and
// average, a scaler's shift and scale, noise); 16 is a stated allowance
// for them, not a measurement of any one algorithm. Metric learning keeps
// D×D matrices and needs more; its callers check that themselves.
const vectorsPerFeature = 16

// DefaultMaxMemory returns the memory budget of one dataset when
// Options.MaxMemory is 0: a quarter of the memory the process may use, at
// most DefaultMaxMemoryCap (4 GiB). The memory the process may use is the
// machine's physical memory, or less where a control group's memory.max
// or the address-space limit (ulimit -v, RLIMIT_AS) is lower. A quarter,
// because a Go process reserves more address space than it touches and
// the commands' own allowance (1.25 × the budget, see transientShare)
// must fit with room to spare. Where the memory is unknown it is
// DefaultMaxMemoryCap.
func DefaultMaxMemory() int64 {
	if p := physicalMemory(); p > 0 {
		return max(min(DefaultMaxMemoryCap, p/4), minMaxMemory)
	}
	return DefaultMaxMemoryCap
}

// Sizes of the headers the budget counts besides backing arrays.
const (
	sliceHeader  = int64(unsafe.Sizeof([]byte(nil)))
	stringHeader = int64(unsafe.Sizeof(""))
)

// readerOverhead is charged up front for the buffers of the reader
// stack: the raw and line readers (64 KiB each) and a decompressor's
// state (bzip2's block arrays, about 4 MiB, dominate; an xz stream's
// dictionary is charged apart, at the size the stream declares).
const readerOverhead = 9 << 20

// budget accounts the memory a Read holds: the storage of the records,
// the parsers' buffers and the per-class bookkeeping, counted at the
// capacity of every backing array (what the allocator really handed out,
// up to its size-class rounding). It refuses any growth that would take
// the total over limit, before allocating. It also bounds the feature
// count D: vectorsPerFeature·8·D ≤ limit.
type budget struct {
	limit int64
	used  int64
	file  string
	lr    *lineReader // for the position of errors; may be nil
}

// raiseLimit is the usual fix of an exhausted budget.
const raiseLimit = "raise --max-memory if the machine has the memory, or use a smaller file"

// errorf reports an exhausted budget at the current line: what needs
// memory (format, args), the limit, and fix.
func (m *budget) errorf(fix, format string, args ...any) error {
	line := 1
	if m.lr != nil {
		line = max(m.lr.line, 1)
	}
	msg := fmt.Sprintf(format, args...)
	return posErr(m.file, line, 1, "%s, %w of %s; %s", msg, ErrMemory, FormatSize(m.limit), fix)
}

// charge accounts n more bytes (n may be negative: a release), refusing a
// charge that would exceed the limit; what describes the memory.
func (m *budget) charge(n int64, what string) error {
	if n > 0 && m.used+n > m.limit {
		return m.errorf(raiseLimit, "memory for %s: %s more needed with %s in use", what, FormatSize(n), FormatSize(m.used))
	}
	m.used += n
	return nil
}

// checkDim refuses a feature count whose per-feature vectors alone would
// exceed the limit; hint says how the count arose.
func (m *budget) checkDim(d int, hint string) error {
	if need := maxDimBytes(d); need > m.limit {
		return m.errorf(fmt.Sprintf("if the file is right, raise --max-memory (%d features fit in this limit), else fix the file (--dim N makes any index above N an error)", MaxDim(m.limit)),
			"%s: training over %d features needs at least %d vectors of %d float64 values (%s)",
			hint, d, vectorsPerFeature, d, FormatSize(need))
	}
	return nil
}

// maxDimBytes is the memory the per-feature vectors of d features take.
func maxDimBytes(d int) int64 {
	return int64(d) * 8 * vectorsPerFeature
}

// MaxDim returns the largest number of features a dataset may have under
// the memory budget limit (0: DefaultMaxMemory).
func MaxDim(limit int64) int {
	if limit == 0 {
		limit = DefaultMaxMemory()
	}
	return int(min(limit/(8*vectorsPerFeature), math.MaxInt32))
}

// matricesPerMetric is how many D×D float64 matrices the memory budget
// must hold for metric learning over D features: the model, its gradient
// and average, and the eigendecomposition of the PSD projection (its
// input, eigenvectors and workspace); 8 is a stated allowance.
const matricesPerMetric = 8

// CheckMatrixDim refuses metric learning over d features when its D×D
// matrices would not fit the memory budget limit (0: DefaultMaxMemory).
func CheckMatrixDim(d int, limit int64) error {
	if limit == 0 {
		limit = DefaultMaxMemory()
	}
	need := float64(d) * float64(d) * 8 * matricesPerMetric
	if need <= float64(limit) {
		return nil
	}
	fit := int(math.Sqrt(float64(limit) / (8 * matricesPerMetric)))
	return fmt.Errorf("data: metric learning over %d features keeps %d×%d matrices: %d of them need %s, %w of %s; at most %d features fit: reduce the features, use --task auc, or raise --max-memory if the machine has the memory",
		d, d, d, matricesPerMetric, FormatSize(int64(min(need, math.MaxInt64/2))), ErrMemory, FormatSize(limit), fit)
}

// transientShare bounds what a Read holds while an array grows: the old
// and the new array together stay within limit + limit/transientShare
// (1.25 × the limit). Replaced arrays of limit/releaseFraction bytes or
// more are handed back to the system at once, and the smaller ones the
// collector frees under the soft memory limit the CLI sets (1.25 × the
// budget + a constant), so that a Read's peak resident memory is about
// 1.25 × the limit plus the process's baseline. The price: one array can
// grow to about 3/4 of the limit only (its copy needs room beside it).
const transientShare = 4

// releaseFraction: growSlice hands a replaced backing array of at least
// limit/releaseFraction bytes back to the system at once. Without it the
// replaced arrays of a growing dataset stay resident until the collector
// runs, up to as much again as the budget; with it, at most three or
// four forced collections happen per file (arrays double).
const releaseFraction = 8

// growSlice makes room in *s for at least n more elements, charging m
// for the new backing array and releasing the old one. The new capacity
// doubles the old one as append would, but never beyond what the budget
// has left, so a file is refused only when what it really needs does not
// fit. A replaced array of limit/releaseFraction bytes or more is
// returned to the system before growSlice returns, so that the process's
// peak stays near the budget.
func growSlice[T any](m *budget, s *[]T, n int, what string) error {
	need := len(*s) + n
	if need <= cap(*s) {
		return nil
	}
	var zero T
	size := int64(unsafe.Sizeof(zero))
	old := int64(cap(*s)) * size
	newCap := int64(max(need, 2*cap(*s), 16))
	// The new array must fit the budget once the old one is released,
	// and both must fit the transient allowance while the one is copied
	// into the other (see transientShare).
	avail := min((m.limit-m.used+old)/size, (m.limit+m.limit/transientShare-m.used)/size)
	if int64(need) > avail {
		return m.errorf(raiseLimit, "memory for %s: %s needed (%d elements of %d bytes) with %s in use", what,
			FormatSize(int64(need)*size), need, size, FormatSize(m.used-old))
	}
	newCap = min(newCap, avail)
	m.used += newCap*size - old
	t := make([]T, len(*s), newCap)
	copy(t, *s)
	*s = t
	if old >= m.limit/releaseFraction {
		debug.FreeOSMemory()
	}
	return nil
}

// reserve makes room in *s for n more elements when the budget has it:
// the parsers call it with an estimate of what the rest of the file
// needs, so that the arrays are not copied at every doubling. An estimate
// the budget cannot hold is skipped (the arrays then grow as they fill,
// and only what the file really needs can be refused).
func reserve[T any](m *budget, s *[]T, n int, what string) {
	var zero T
	size := int64(unsafe.Sizeof(zero))
	if n <= 0 || int64(len(*s)+n)*size > m.limit-m.used+int64(cap(*s))*size {
		return
	}
	_ = growSlice(m, s, n, what)
}

// trim gives back the unused capacity of *s when it is more than an
// eighth of its length (a reservation that overestimated), copying it into
// an array of its length.
func trim[T any](m *budget, s *[]T) {
	if cap(*s)-len(*s) <= len(*s)/8 {
		return
	}
	var zero T
	t := make([]T, len(*s))
	copy(t, *s)
	m.used -= int64(cap(*s)-len(*s)) * int64(unsafe.Sizeof(zero))
	*s = t
}

// push appends v to *s, charging m when the backing array grows.
func push[T any](m *budget, s *[]T, v T, what string) error {
	if len(*s) == cap(*s) {
		if err := growSlice(m, s, 1, what); err != nil {
			return err
		}
	}
	*s = append(*s, v)
	return nil
}

// FormatSize formats a byte count with binary units (e.g. "4 GiB",
// "1.5 MiB", "512 B").
func FormatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for math.Abs(v) >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return strconv.FormatInt(n, 10) + " B"
	}
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0") + " " + units[u]
}

// ParseSize parses a byte count: a number with an optional unit B, K, M,
// G, T (powers of 1024; KiB, MiB, ... and KB, MB, ... are read the same)
// in any case, e.g. "512MiB", "4G", "1.5gib", "1073741824".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i")
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30, "t": 40}
	sh, ok := shift[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || num == "" || !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("data: size %q is not a byte count (e.g. 512MiB, 4GiB, 1073741824)", s)
	}
	b := v * float64(uint64(1)<<sh)
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("data: size %q is too large", s)
	}
	return int64(b), nil
}

// xzDictCap returns the LZMA2 dictionary size that the first block of an
// xz stream declares (the decoder allocates it in full), 0 if the start
// of the stream cannot be parsed (the decoder then reports the error).
// Later blocks may declare other sizes; the first one is what tools write.
func xzDictCap(b []byte) int64 {
	const streamHeader = 12
	if len(b) < streamHeader+2 {
		return 0
	}
	h := b[streamHeader:]
	size := (int(h[0]) + 1) * 4
	if h[0] == 0 || len(h) < size {
		return 0
	}
	flags, p := h[1], 2
	uvarint := func() (uint64, bool) {
		var x uint64
		for s := 0; p < size-4 && s < 63; s += 7 {
			c := h[p]
			p++
			x |= uint64(c&0x7f) << s
			if c < 0x80 {
				return x, true
			}
		}
		return 0, false
	}
	for _, present := range []bool{flags&0x40 != 0, flags&0x80 != 0} {
		if present {
			if _, ok := uvarint(); !ok {
				return 0
			}
		}
	}
	var dict int64
	for f := 0; f <= int(flags&3); f++ {
		id, ok1 := uvarint()
		n, ok2 := uvarint()
		if !ok1 || !ok2 || n > uint64(size-4-p) {
			return 0
		}
		if id == 0x21 && n == 1 {
			if d, err := lzma.DecodeDictCap(h[p]); err == nil {
				dict = d
			}
		}
		p += int(n)
	}
	return dict
}
