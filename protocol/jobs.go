package protocol

import "fmt"

// Jobs as objects: a client lists the jobs a coordinator knows
// (JobList → JobPage) and cancels one (JobCancel → JobStatus). Both are
// sent on JobsSubject like JobSubmit and JobQuery, so exactly the
// deployment's client account may send them (deploy: only it may publish
// there), and the reply goes to ClientSubject(fed, Client).
//
// Who may cancel (issue 28: one party of a shared client account must not
// waste another's budget by cancelling its job). The deployment's client
// account is shared by every party that submits jobs (ten hospitals may
// submit through one login), so the account is not the trust boundary
// for cancelling; the job's cancel key is:
//
//   - a job submitted with a CancelHash (every `pairfed job submit` of
//     this version) is cancelled only by a JobCancel whose Key hashes
//     (SHA-256) to it — the key the submitter was given — or to the
//     hash of the coordinator operator's admin key (a secret in the
//     coordinator's state directory, so that a job whose key was lost
//     is not uncancellable); the coordinator compares in constant time
//     and never logs a key;
//   - a job submitted without one (older clients) keeps the earlier
//     rule: any client of the account may cancel it (the submitter's
//     Client is a random token of one `job submit` run, lost when it
//     exits, so "only the submitter's token" would make it uncancellable).
//
// A refused cancel changes nothing: the reply is the job's status with
// its Status unchanged and a Reason starting "cancel refused: " that says
// why. The cancelling client's token, and which key it used, are recorded
// in the status of a job it cancelled ("cancelled by <client> …") and in
// the coordinator's log.

// CancelKeyLen is the length in bytes of a cancel key (JobCancel.Key)
// and of its SHA-256 hash (JobSubmit.CancelHash).
const CancelKeyLen = 32

// CheckCancelHash checks a job's cancel hash: empty (the job has none) or
// exactly CancelKeyLen bytes.
func CheckCancelHash(job string, h []byte) error {
	if len(h) != 0 && len(h) != CancelKeyLen {
		return fmt.Errorf("protocol: job %s: cancel hash of %d bytes, want %d (a SHA-256) or none", job, len(h), CancelKeyLen)
	}
	return nil
}

// Kinds of the job-object messages (values after KindJobQuery, before the
// secure aggregation block at 32).
const (
	KindJobList   Kind = 14 // client → coordinator: one page of the jobs it knows (never starts one)
	KindJobPage   Kind = 15 // coordinator → client: a page of job summaries
	KindJobCancel Kind = 16 // client → coordinator: cancel a queued or running job
)

func init() {
	kindNames[KindJobList], kindNames[KindJobPage], kindNames[KindJobCancel] = "job-list", "job-page", "job-cancel"
}

// MaxJobPage bounds the jobs of one JobPage: a coordinator that knows
// more answers in pages (JobPage.Next), so a reply stays well below
// MaxMessageSize (each summary at most ~MaxSites names of MaxNameLen
// bytes, 100 × 66 KiB ≈ 6.6 MB in the worst case).
const MaxJobPage = 100

// JobList asks for the jobs the coordinator knows whose ids sort after
// After ("" for the first page), in byte order of their ids, at most
// Limit of them (0 or more than MaxJobPage: MaxJobPage).
type JobList struct {
	Client string `msgpack:"client"`
	After  string `msgpack:"after,omitempty"`
	Limit  int    `msgpack:"limit,omitempty"`
}

// JobPage answers a JobList: the summaries in id order and, when more
// jobs follow, Next, the After of the next page ("" on the last page).
// Total is the number of jobs the coordinator knows.
type JobPage struct {
	Jobs  []JobSummary `msgpack:"jobs" json:"jobs"`
	Next  string       `msgpack:"next,omitempty" json:"next,omitempty"`
	Total int          `msgpack:"total" json:"total"`
}

// JobSummary is one job of a JobPage. Private and Privacy say whether the
// result is private end to end (Privacy: "private: yes …" or "NOT private:
// <reason>"; empty until the job completed). Submitted and Finished are
// Unix times in seconds when the coordinator knows them (0: unknown).
type JobSummary struct {
	Job       string   `msgpack:"job" json:"job"`
	Algo      string   `msgpack:"algo" json:"algorithm,omitempty"`
	Status    string   `msgpack:"status" json:"status"`
	Reason    string   `msgpack:"reason,omitempty" json:"reason,omitempty"`
	Private   bool     `msgpack:"private" json:"private"`
	Privacy   string   `msgpack:"privacy,omitempty" json:"privacy_status,omitempty"`
	Sites     []string `msgpack:"sites" json:"sites"`
	Submitted int64    `msgpack:"submitted,omitempty" json:"submitted,omitempty"`
	Finished  int64    `msgpack:"finished,omitempty" json:"finished,omitempty"`
}

// JobCancel asks the coordinator to cancel Job: a queued job leaves the
// queue, a running job is aborted (its sites hear an Abort and release
// nothing further). The reply is the job's status on
// ClientSubject(fed, Client): "failed" with the reason "cancelled by
// <Client>", or its status unchanged when it had already ended (or
// "unknown"), or when Key does not authorize the cancel (see "Who may
// cancel"; the reply's Reason then starts "cancel refused: ").
type JobCancel struct {
	Job    string `msgpack:"job"`
	Client string `msgpack:"client"`
	// Key is the job's cancel key (the secret whose SHA-256 is the job's
	// JobSubmit.CancelHash) or the coordinator operator's admin key;
	// empty or CancelKeyLen bytes. Omitted when empty.
	Key []byte `msgpack:"key,omitempty" json:"-"`
}

func (*JobList) Kind() Kind   { return KindJobList }
func (*JobPage) Kind() Kind   { return KindJobPage }
func (*JobCancel) Kind() Kind { return KindJobCancel }

var (
	_ Message = (*JobList)(nil)
	_ Message = (*JobPage)(nil)
	_ Message = (*JobCancel)(nil)
)

func (m *JobList) Validate() error {
	if err := ValidName("client", m.Client); err != nil {
		return err
	}
	if m.After != "" {
		if err := ValidName("job", m.After); err != nil {
			return fmt.Errorf("protocol: job list: after: %w", err)
		}
	}
	if m.Limit < 0 || m.Limit > MaxJobPage {
		return fmt.Errorf("protocol: job list: limit %d outside [0, %d]", m.Limit, MaxJobPage)
	}
	return nil
}

func (m *JobPage) Validate() error {
	if len(m.Jobs) > MaxJobPage {
		return fmt.Errorf("protocol: job page of %d jobs exceeds %d", len(m.Jobs), MaxJobPage)
	}
	if m.Total < len(m.Jobs) || m.Total > 1<<40 {
		return fmt.Errorf("protocol: job page: total %d below its %d jobs or above 2^40", m.Total, len(m.Jobs))
	}
	if m.Next != "" {
		if err := ValidName("job", m.Next); err != nil {
			return fmt.Errorf("protocol: job page: next: %w", err)
		}
	}
	prev := ""
	for i := range m.Jobs {
		j := &m.Jobs[i]
		if err := ValidName("job", j.Job); err != nil {
			return err
		}
		if i > 0 && j.Job <= prev {
			return fmt.Errorf("protocol: job page: job %s after %s: ids must be strictly increasing", j.Job, prev)
		}
		prev = j.Job
		if j.Algo != "" {
			if err := ValidName("algorithm", j.Algo); err != nil {
				return err
			}
		}
		if !jobStatuses[j.Status] || j.Status == StatusUnknown {
			return fmt.Errorf("protocol: job %s: unknown status %q", j.Job, j.Status)
		}
		if err := checkReason(j.Reason); err != nil {
			return err
		}
		if err := checkReason(j.Privacy); err != nil {
			return err
		}
		if err := checkSites("active", j.Sites); err != nil {
			return err
		}
		if j.Submitted < 0 || j.Finished < 0 {
			return fmt.Errorf("protocol: job %s: negative time (submitted %d, finished %d)", j.Job, j.Submitted, j.Finished)
		}
	}
	return nil
}

func (m *JobCancel) Validate() error {
	if err := ValidName("job", m.Job); err != nil {
		return err
	}
	if len(m.Key) != 0 && len(m.Key) != CancelKeyLen {
		return fmt.Errorf("protocol: job cancel of %s: key of %d bytes, want %d or none", m.Job, len(m.Key), CancelKeyLen)
	}
	return ValidName("client", m.Client)
}

// checkBest checks a status's best-phase fields: all unset, or a phase in
// [1, Phases] with a finite score in [0, 1] and a finite model of the
// final model's length.
func checkBest(m *JobStatus) error {
	if m.BestPhase == 0 && m.BestAUC == 0 && m.BestModel == nil {
		return nil
	}
	if m.BestPhase < 1 || m.BestPhase > m.Phases {
		return fmt.Errorf("protocol: job %s: best phase %d outside [1, %d]", m.Job, m.BestPhase, m.Phases)
	}
	if err := finite("best auc", m.BestAUC); err != nil {
		return err
	}
	if m.BestAUC < 0 || m.BestAUC > 1 {
		return fmt.Errorf("protocol: job %s: best auc %v outside [0, 1]", m.Job, m.BestAUC)
	}
	if err := checkModel(m.BestModel, true); err != nil {
		return fmt.Errorf("protocol: job %s: best model: %w", m.Job, err)
	}
	if len(m.BestModel) != len(m.Model) {
		return fmt.Errorf("protocol: job %s: best model of %d parameters, final model %d", m.Job, len(m.BestModel), len(m.Model))
	}
	return nil
}
