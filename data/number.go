package data

import (
	"errors"
	"math"
	"strconv"
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
		return "non-finite " + what + " " + strconv.Quote(string(s))
	case numOverflow:
		return what + " " + strconv.Quote(string(s)) + " out of range"
	}
	return "bad " + what + " " + strconv.Quote(string(s))
}
