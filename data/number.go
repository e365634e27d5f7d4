package data

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Outcomes of parseNumber.
const (
	numOK = iota
	numBad
	numNonFinite
	numOverflow
)

// parseNumber parses a decimal number as written in data files: digits,
// sign, point and exponent. Hex floats, digit separators and the NaN/Inf
// literals that strconv accepts are rejected.
func parseNumber(b []byte) (float64, int) {
	if v, ok := parseExact(b); ok {
		return v, numOK
	}
	return parseNumberSlow(b)
}

// parseNumberSlow is parseNumber without the fast path (strconv for every
// value): the general path, and the reference the fast path is tested
// against bit for bit.
func parseNumberSlow(b []byte) (float64, int) {
	if len(b) == 0 {
		return 0, numBad
	}
	plain := true
	for _, c := range b {
		if !('0' <= c && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			plain = false
			break
		}
	}
	v, err := strconv.ParseFloat(string(b), 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange) && plain:
		return 0, numOverflow
	case err != nil:
		return 0, numBad
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, numNonFinite
	case !plain:
		return 0, numBad
	}
	return v, numOK
}

// numProblem describes a parseNumber failure for the value s.
func numProblem(what string, s []byte, outcome int) string {
	switch outcome {
	case numNonFinite:
		return "non-finite " + what + " " + quoteShort(s)
	case numOverflow:
		return what + " " + quoteShort(s) + " out of range"
	}
	return "bad " + what + " " + quoteShort(s)
}

// quoteShort quotes a cell for an error message: whole up to 64 bytes,
// else its first 40 bytes (whole UTF-8 characters), "…" and its length.
// Probe 6 (issue 28): a cell of 50 MB was quoted whole, a 50 MB message.
func quoteShort(s []byte) string {
	if len(s) <= 64 {
		return strconv.Quote(string(s))
	}
	n := 40
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strconv.Quote(string(s[:n])+"…") + fmt.Sprintf(" (%d bytes)", len(s))
}

// exactPow10 holds the powers of ten that float64 represents exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseExact is the fast path of parseNumber, for the numbers data files
// are mostly made of: [+-]digits[.digits][(e|E)[+-]digits] whose digits
// form an integer m ≤ 2⁵³ and whose decimal exponent e (after moving the
// point behind the last digit) is in [−22, 22]. Then m and 10^|e| are
// exact float64 values and one IEEE multiplication or division rounds
// m·10^e correctly — Clinger's fast path, the first one
// strconv.ParseFloat takes — so the result is bit for bit strconv's. It
// reports false for anything else (longer mantissas, larger exponents,
// malformed text), which parseNumber hands to strconv.ParseFloat.
func parseExact(b []byte) (float64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	var m uint64
	digits, sig, frac := 0, 0, 0 // all mantissa digits, significant ones, digits after the point
	point := false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case '0' <= c && c <= '9':
			digits++
			if point {
				frac++
			}
			if m != 0 || c != '0' {
				if sig++; sig > 19 {
					return 0, false
				}
			}
			m = m*10 + uint64(c-'0')
			continue
		case c == '.' && !point:
			point = true
			continue
		}
		break
	}
	if digits == 0 || m > 1<<53 {
		return 0, false
	}
	e := 0
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		start := i
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			if e < 1000 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if i == start {
			return 0, false
		}
		if eneg {
			e = -e
		}
	}
	if i != len(b) {
		return 0, false
	}
	e -= frac
	f := float64(m)
	switch {
	case m == 0:
	case e < -22 || e > 22:
		return 0, false
	case e < 0:
		f /= exactPow10[-e]
	default:
		f *= exactPow10[e]
	}
	if neg {
		f = -f
	}
	return f, true
}
