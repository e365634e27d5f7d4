package coordinator

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// onList answers a JobList with one page of the jobs the service knows
// (queued, running, finished, and the last submissions refused on
// arrival), in byte order of their ids after m.After: at most
// protocol.MaxJobPage a reply, whatever the client asks, so the reply is
// bounded however many jobs the coordinator has run. The cost is
// O(J log J) for J known jobs (J is bounded by the finished jobs kept in
// the state directory plus maxRejected).
func (s *Service) onList(m *protocol.JobList) []Output {
	limit := m.Limit
	if limit <= 0 || limit > protocol.MaxJobPage {
		limit = protocol.MaxJobPage
	}
	ids := make([]string, 0, len(s.status))
	for id := range s.status {
		if id > m.After {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	page := &protocol.JobPage{Total: len(s.status)}
	if len(ids) > limit {
		ids = ids[:limit]
		page.Next = ids[limit-1]
	}
	for _, id := range ids {
		page.Jobs = append(page.Jobs, Summary(s.status[id]))
	}
	return []Output{{Subject: protocol.ClientSubject(s.cfg.Federation, m.Client), Msg: page}}
}

// Summary is the line of `pairfed job list` for a job's status: whether
// its result is private end to end (PrivacyStatus; a job that did not
// complete has no result and says so), its sites and times.
func Summary(st *protocol.JobStatus) protocol.JobSummary {
	j := protocol.JobSummary{Job: st.Job, Algo: st.Algo, Status: st.Status, Reason: st.Reason, Sites: slices.Clone(st.Sites),
		Submitted: st.Submitted, Finished: st.Finished}
	if p := PrivacyStatus(st); p != "" {
		j.Privacy, j.Private = truncate(p, protocol.MaxReasonLen), strings.HasPrefix(p, "private: yes")
	} else if st.Status == protocol.StatusQueued || st.Status == protocol.StatusRunning {
		j.Privacy = fmt.Sprintf("no result yet: the job is %s (only a completed job has a certified result)", st.Status)
		if !fedalgo.Private(st.Algo) && st.Algo != "" {
			j.Privacy = fmt.Sprintf("NOT private: %s adds no noise", st.Algo)
		}
	} else if fedalgo.Private(st.Algo) {
		j.Privacy = fmt.Sprintf("no result: the job %s (releases made before it ended were charged; see its status)", st.Status)
	} else if st.Algo != "" {
		j.Privacy = fmt.Sprintf("NOT private: %s adds no noise", st.Algo)
	}
	return j
}

// CancelPrefix starts the reason of a cancelled job's status.
const CancelPrefix = "cancelled by "

// onCancel cancels job m.Job for client m.Client and replies with its
// status on the client's subject (and, when the job ended now, to its
// submitter as usual):
//
//   - queued: it leaves the queue; its status is failed, "cancelled by
//     <client>"; nothing was announced, no site was charged;
//   - running: it is aborted through the coordinator's abort path (the
//     one a lost quorum or a storage error takes): every participant
//     hears an Abort and releases nothing further; the phases aggregated
//     before stay charged (their releases happened), a job still in its
//     accept round charges no one; its status is failed, "cancelled by
//     <client>: …";
//   - ended or unknown: nothing changes; the reply is its status.
//
// Any client of the deployment's client account may cancel (see
// protocol.JobCancel for why); the canceller is logged and named in the
// status.
func (s *Service) onCancel(m *protocol.JobCancel) []Output {
	to := protocol.ClientSubject(s.cfg.Federation, m.Client)
	why := CancelPrefix + m.Client
	if i := slices.IndexFunc(s.queue, func(q *queued) bool { return q.submit.Job == m.Job }); i >= 0 {
		q := s.queue[i]
		s.queue = slices.Delete(s.queue, i, i+1)
		st := &protocol.JobStatus{Job: m.Job, Status: protocol.StatusFailed, Algo: q.job.Algo,
			Reason: truncate(why+" while queued: nothing was announced to the sites", protocol.MaxReasonLen)}
		if old := s.status[m.Job]; old != nil {
			st.Submitted = old.Submitted
		}
		st.Finished = s.clock()
		s.logf("job %s %s while queued", m.Job, why)
		s.status[m.Job] = st
		s.finished = append(s.finished, st)
		s.ended++
		outs := s.reply(m.Job)
		if s.clients[m.Job] != to {
			outs = append(outs, Output{Subject: to, Msg: st})
		}
		return append(outs, s.settle()...)
	}
	if s.Running() == m.Job && s.inner != nil && !s.inner.Done() {
		s.logf("job %s %s while running: aborting it", m.Job, why)
		s.cancelled = why
		outs := s.inner.abort(why)
		outs = append(outs, s.settle()...) // finish: the status, its reply
		if s.clients[m.Job] != to {
			outs = append(outs, Output{Subject: to, Msg: s.status[m.Job]})
		}
		return outs
	}
	st := s.status[m.Job]
	if st == nil {
		st = &protocol.JobStatus{Job: m.Job, Status: protocol.StatusUnknown, Reason: "no job " + m.Job + " at this coordinator (job ids are case-sensitive)"}
	}
	return []Output{{Subject: to, Msg: st}}
}

// clock is ServiceConfig.Now's time, 0 when it has none.
func (s *Service) clock() int64 {
	if s.cfg.Now == nil {
		return 0
	}
	return max(s.cfg.Now(), 0)
}

// stamp carries the submission time of the job's previous status into st
// and, when st is terminal, records the time it ended.
func (s *Service) stamp(st *protocol.JobStatus) *protocol.JobStatus {
	if old := s.status[st.Job]; old != nil && st.Submitted == 0 {
		st.Submitted = old.Submitted
	}
	switch st.Status {
	case protocol.StatusCompleted, protocol.StatusFailed, protocol.StatusRefused:
		if st.Finished == 0 {
			st.Finished = s.clock()
		}
	}
	return st
}
