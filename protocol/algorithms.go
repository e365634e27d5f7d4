package protocol

import (
	"fmt"
	"sync"
)

// AlgoParams are the algorithm-specific parameters of a job as they travel
// in JobSubmit and JobAnnounce. The protocol knows no algorithm by name:
// every federated algorithm (package fedalgo) registers a validator for
// its parameters, which Validate — and so Encode and Decode — applies to
// every submission and announcement naming it. A name without a
// registered validator passes here (the coordinator refuses unknown
// algorithms) so that this package decodes any well-formed message.
//
// The parameters shared by every algorithm (η, B, R, λ, ε, δ, rounds,
// local passes, phases) are fields of the messages; LocalAlgo is the one
// algorithm-specific field so far. New parameters are appended as
// optional (omitempty) fields, so that older encodings decode unchanged
// and the protocol Version stays 1.
type AlgoParams struct {
	Job, Algo string
	// LocalAlgo is the single-site algorithm an algorithm runs at every
	// site, or "".
	LocalAlgo string
}

var (
	algoMu         sync.RWMutex
	algoValidators = map[string]func(AlgoParams) error{}
)

// RegisterAlgorithm installs the validator of algorithm name's parameters
// (package fedalgo calls it from Register). It panics on a duplicate.
func RegisterAlgorithm(name string, validate func(AlgoParams) error) {
	algoMu.Lock()
	defer algoMu.Unlock()
	if _, dup := algoValidators[name]; dup {
		panic("protocol: duplicate algorithm validator " + name)
	}
	algoValidators[name] = validate
}

// checkAlgoParams applies the generic checks and the algorithm's own
// validator, if registered.
func checkAlgoParams(p AlgoParams) error {
	if p.LocalAlgo != "" {
		if err := ValidName("local algorithm", p.LocalAlgo); err != nil {
			return err
		}
	}
	algoMu.RLock()
	v := algoValidators[p.Algo]
	algoMu.RUnlock()
	if v == nil {
		return nil
	}
	if err := v(p); err != nil {
		return fmt.Errorf("protocol: job %s: %w", p.Job, err)
	}
	return nil
}
