package pairwise

// SetPSDStepFast turns the PSD projector's step fast path on or off for the
// external tests and returns the previous setting.
func SetPSDStepFast(on bool) bool {
	old := psdStepFast
	psdStepFast = on
	return old
}
