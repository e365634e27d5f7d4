package coordinator

import (
	"fmt"

	"github.com/pairfed/pairfed/protocol"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// acceptAll answers the running job's accept round for every active
// participant (as their sites do), returning the outputs.
func acceptAll(s *Service) []Output {
	if s.inner == nil || s.inner.job == nil || s.inner.Accepted() {
		return nil
	}
	var outs []Output
	for _, name := range s.inner.Active() {
		outs = append(outs, s.Step(&protocol.Accept{Job: s.inner.job.Job, Site: name})...)
	}
	return outs
}

// acceptJob is acceptAll for a one-job Coordinator.
func acceptJob(c *Coordinator) []Output {
	if c.job == nil || c.Accepted() {
		return nil
	}
	var outs []Output
	for _, name := range c.Active() {
		outs = append(outs, c.Step(&protocol.Accept{Job: c.job.Job, Site: name})...)
	}
	return outs
}
