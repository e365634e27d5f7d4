package coordinator

import (
	"crypto/sha256"
	"crypto/subtle"
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
		j := Summary(s.status[id])
		if j.Status == protocol.StatusQueued || j.Status == protocol.StatusRunning {
			// Which cancel rule applies (protocol.JobCancel, "Who may
			// cancel"), in the reason: a field of its own would be an
			// unknown field to the strict decoder of an older client.
			note := CancelByAnyNote
			if len(s.cancelHash(id)) > 0 {
				note = CancelByKeyNote
			}
			j.Reason = truncate(joinReason(j.Reason, note), protocol.MaxReasonLen)
		}
		page.Jobs = append(page.Jobs, j)
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

// The notes of a queued or running job's summary (`pairfed job list`)
// that say who may cancel it.
const (
	CancelByKeyNote = "cancel: only with its cancel key or the coordinator's admin key"
	CancelByAnyNote = "cancel: by any client of the account (submitted without a cancel key)"
)

// CancelRefusedPrefix starts the Reason of the reply to a JobCancel whose
// key does not authorize it (the job's status otherwise unchanged).
const CancelRefusedPrefix = "cancel refused: "

// CancelKeyNotTaken is added (with the job id) to the reason of the reply
// to a submission of an id the coordinator already runs or queues under
// another cancel key (or none): the new submission's key cancels nothing.
const CancelKeyNotTaken = "job %s already existed at this coordinator, submitted earlier under another cancel key or none: this submission's cancel key does not apply to it"

// CancelHash is the hash a job's cancel key is stored under
// (protocol.JobSubmit.CancelHash, ServiceConfig.AdminCancelHash): its
// SHA-256. A key is CancelKeyLen random bytes, so the hash reveals
// nothing usable and a guess succeeds with probability 2⁻²⁵⁶.
func CancelHash(key []byte) []byte {
	h := sha256.Sum256(key)
	return h[:]
}

// hashesEqual compares two hashes in constant time (for equal lengths).
func hashesEqual(a, b []byte) bool {
	return len(a) == len(b) && subtle.ConstantTimeCompare(a, b) == 1
}

// cancelHash is the cancel hash of a queued or running job (nil: none,
// or the job is neither).
func (s *Service) cancelHash(job string) []byte {
	if s.cur != nil && s.inner != nil && !s.inner.Done() && s.cur.submit.Job == job {
		return s.cur.submit.CancelHash
	}
	if i := slices.IndexFunc(s.queue, func(q *queued) bool { return q.submit.Job == job }); i >= 0 {
		return s.queue[i].submit.CancelHash
	}
	return nil
}

// mayCancel decides whether m may cancel a queued or running job whose
// cancel hash is h. It returns the words naming the authority in the
// job's status ("" under the rule of a job without a hash) or, when
// refused, the reason. A key is compared with the job's hash and the
// admin hash only through their SHA-256, in constant time; it is never
// logged or kept.
func (s *Service) mayCancel(m *protocol.JobCancel, h []byte) (by string, ok bool, refusal string) {
	var kh []byte
	if len(m.Key) > 0 {
		kh = CancelHash(m.Key)
	}
	jobKey := kh != nil && hashesEqual(kh, h)
	admin := kh != nil && len(s.cfg.AdminCancelHash) > 0 && hashesEqual(kh, s.cfg.AdminCancelHash)
	switch {
	case len(h) == 0 && admin:
		return " with the coordinator's admin key", true, ""
	case len(h) == 0:
		return "", true, "" // a job without a cancel key: any client of the account
	case jobKey:
		return " with the job's cancel key", true, ""
	case admin:
		return " with the coordinator's admin key", true, ""
	case kh == nil:
		return "", false, fmt.Sprintf("job %s was submitted with a cancel key and this request carries none: give the key `pairfed job submit` printed (job cancel --cancel-key KEY or @FILE), or the coordinator operator's admin key (admin.key in the coordinator's state directory)", m.Job)
	}
	return "", false, fmt.Sprintf("job %s was submitted with a cancel key; this request's key does not match: use the key printed by `pairfed job submit` for this job (job cancel --cancel-key KEY or @FILE), or the coordinator operator's admin key (admin.key in the coordinator's state directory)", m.Job)
}

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
// Who may cancel a queued or running job (protocol.JobCancel, "Who may
// cancel"): a job submitted with a cancel hash only with its key
// (m.Key, whose SHA-256 is the hash) or the operator's admin key
// (ServiceConfig.AdminCancelHash); a job without one, any client of the
// account. A refused cancel changes nothing and is logged (the job, the
// client, no key); its reply is the job's status with the refusal,
// prefixed CancelRefusedPrefix, as its reason. The canceller is logged
// and named in the status, with the key it used ("cancelled by <client>
// with the job's cancel key while …").
func (s *Service) onCancel(m *protocol.JobCancel) []Output {
	to := protocol.ClientSubject(s.cfg.Federation, m.Client)
	i := slices.IndexFunc(s.queue, func(q *queued) bool { return q.submit.Job == m.Job })
	running := i < 0 && s.Running() == m.Job && s.inner != nil && !s.inner.Done()
	if i < 0 && !running {
		st := s.status[m.Job]
		if st == nil {
			st = &protocol.JobStatus{Job: m.Job, Status: protocol.StatusUnknown, Reason: "no job " + m.Job + " at this coordinator (job ids are case-sensitive)"}
		}
		return []Output{{Subject: to, Msg: st}}
	}
	by, ok, refusal := s.mayCancel(m, s.cancelHash(m.Job))
	if !ok {
		// Anyone on the jobs subject can send wrong keys as fast as the
		// network allows: the log keeps the first few refusals of a job
		// and then one per doubling of their count, so that it does not
		// grow by a line per request (probe 7).
		if s.refusals == nil {
			s.refusals = map[string]int{}
		}
		s.refusals[m.Job]++
		if n := s.refusals[m.Job]; n <= 4 || n&(n-1) == 0 {
			more := ""
			if n > 4 {
				more = fmt.Sprintf(" (%d cancels of this job refused so far; logged at 1 to 4, then at 8, 16, 32, …)", n)
			}
			s.logf("job %s: cancel by client %s refused%s: %s", m.Job, m.Client, more, refusal)
		}
		st := &protocol.JobStatus{Job: m.Job, Status: protocol.StatusQueued}
		if old := s.status[m.Job]; old != nil {
			c := *old
			st = &c
		}
		why := CancelRefusedPrefix + refusal
		if st.Reason != "" {
			why += " (the job's own status: " + st.Reason + ")"
		}
		st.Reason = truncate(why, protocol.MaxReasonLen)
		return []Output{{Subject: to, Msg: st}}
	}
	why := CancelPrefix + m.Client + by
	if !running {
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
	s.logf("job %s %s while running: aborting it", m.Job, why)
	s.cancelled = why
	outs := s.inner.abort(why)
	outs = append(outs, s.settle()...) // finish: the status, its reply
	if s.clients[m.Job] != to {
		outs = append(outs, Output{Subject: to, Msg: s.status[m.Job]})
	}
	return outs
}

// joinReason is a status reason followed by a note.
func joinReason(reason, note string) string {
	if reason == "" {
		return note
	}
	return reason + "; " + note
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
