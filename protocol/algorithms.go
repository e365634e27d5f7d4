package protocol

import (
	"fmt"
	"maps"
	"slices"
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
// local passes, phases) are fields of the messages. An algorithm's own
// parameters travel as Options, named numbers that only its validator
// interprets, so a new algorithm needs no new field; LocalAlgo
// is the one algorithm-specific field from before Options. Both are
// optional (omitempty): encodings without them — every message of
// protocol Version 1 before they existed — decode unchanged and re-encode
// to the same bytes. An algorithm that changes the meaning of its options
// versions them itself (e.g. an option "v").
type AlgoParams struct {
	Job, Algo string
	// LocalAlgo is the single-site algorithm an algorithm runs at every
	// site, or "".
	LocalAlgo string
	// Options are the algorithm's own parameters (nil when none).
	Options Options
}

// Option is one named parameter of an algorithm.
type Option struct {
	Name  string  `msgpack:"name" json:"name"`
	Value float64 `msgpack:"value" json:"value"`
}

// Options are an algorithm's own parameters, sorted by name without
// repeats (Validate checks it), so that the same options always encode to
// the same bytes.
type Options []Option

// OptionsOf returns m as Options (sorted; nil for an empty m).
func OptionsOf(m map[string]float64) Options {
	if len(m) == 0 {
		return nil
	}
	o := make(Options, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		o = append(o, Option{Name: k, Value: m[k]})
	}
	return o
}

// Get returns the value of option name and whether it is set.
func (o Options) Get(name string) (float64, bool) {
	for _, x := range o {
		if x.Name == name {
			return x.Value, true
		}
	}
	return 0, false
}

// MaxOptions bounds the number of an algorithm's options in a message.
const MaxOptions = 64

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
	if len(p.Options) > MaxOptions {
		return fmt.Errorf("protocol: job %s: %d options exceed %d", p.Job, len(p.Options), MaxOptions)
	}
	for i, o := range p.Options {
		if err := ValidName("option", o.Name); err != nil {
			return err
		}
		if i > 0 && o.Name <= p.Options[i-1].Name {
			return fmt.Errorf("protocol: job %s: options %q and %q are not sorted by name without repeats", p.Job, p.Options[i-1].Name, o.Name)
		}
		if err := finite("option "+o.Name, o.Value); err != nil {
			return err
		}
	}
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
