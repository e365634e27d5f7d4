package node

// UsageError marks an error in what the caller configured (a flag of
// `pairfed coordinator` or `pairfed worker`): the command line exits with
// status 2 on it. Its text is the wrapped error's.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(err error) error { return &UsageError{err} }
