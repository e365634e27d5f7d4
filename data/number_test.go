package data

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// parseNumberRef is the reference the fast path must match bit for bit.
var parseNumberRef = parseNumberSlow

func checkNumber(t *testing.T, s string) {
	t.Helper()
	v, o := parseNumber([]byte(s))
	rv, ro := parseNumberRef([]byte(s))
	if o != ro || math.Float64bits(v) != math.Float64bits(rv) {
		t.Fatalf("parseNumber(%q) = %v (%x), outcome %d; strconv: %v (%x), outcome %d",
			s, v, math.Float64bits(v), o, rv, math.Float64bits(rv), ro)
	}
}

func TestParseNumberMatchesStrconv(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "+0", "0.0", "-0.0", "00", "1", "-1", "+1", "1.", ".5", "-.5", "+.5", ".", "-", "+", "",
		"1e", "1e+", "e5", ".e5", "1.2.3", "+-1", "--1", "1e5", "1E5", "1e-5", "1e+05", "0e999", "-0e-999",
		"0.1", "0.2", "0.3", "-0.999998", "6:33", "33.599998", "1e22", "1e23", "1e-22", "1e-23",
		"9007199254740992", "9007199254740993", "4503599627370497", "18446744073709551615",
		"1234567890123456789", "12345678901234567890", "0.0000000000000000000001", "1_000", "0x10",
		"inf", "NaN", "1e400", "-1e400", "1e-400", "1 ", " 1", "1e1000000", "123456789012345678e-22",
		"4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "0.30000000000000004",
	} {
		checkNumber(t, s)
	}
	// Random decimals in the shapes data files use, and random strings
	// over the number alphabet (mostly malformed).
	rng := rand.New(rand.NewPCG(1, 2))
	digits := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteByte(byte('0' + rng.IntN(10)))
		}
		return sb.String()
	}
	for range 200000 {
		var s string
		switch rng.IntN(4) {
		case 0: // %f-like
			s = digits(1+rng.IntN(8)) + "." + digits(rng.IntN(12))
		case 1: // %g-like with an exponent
			s = digits(1) + "." + digits(rng.IntN(18)) + "e" + []string{"", "+", "-"}[rng.IntN(3)] + strconv.Itoa(rng.IntN(40))
		case 2: // long mantissas around the 19-digit and 2⁵³ limits
			s = digits(14+rng.IntN(8)) + []string{"", ".", "." + digits(3)}[rng.IntN(3)]
		default:
			const alphabet = "0123456789.-+eE"
			b := make([]byte, rng.IntN(8))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			s = string(b)
		}
		if rng.IntN(3) == 0 {
			s = "-" + s
		}
		checkNumber(t, s)
	}
}

func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"0", "-0.999998", "1e22", "9007199254740993", ".5", "1e", "0x1p3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkNumber(t, s) })
}

func BenchmarkParseNumber(b *testing.B) {
	vals := [][]byte{[]byte("-0.999998"), []byte("0.284091"), []byte("1"), []byte("-0.426848"), []byte("33.599998")}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			for _, v := range vals {
				parseNumber(v)
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for b.Loop() {
			for _, v := range vals {
				parseNumberRef(v)
			}
		}
	})
}
