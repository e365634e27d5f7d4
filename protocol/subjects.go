package protocol

import "fmt"

// Subject layout (see the package documentation). The helpers do not
// validate: callers validate names once, with ValidName, when they are
// configured.

// SubjectPrefix is the first token of every pairfed subject.
const SubjectPrefix = "pairfed"

// CoordinatorName is the From of messages the coordinator sends.
const CoordinatorName = "coordinator"

// CoordSubject is the root of the subjects on which sites send to the
// coordinator of federation fed: site s publishes on SiteToCoordSubject
// (fed, s) = CoordSubject(fed) + "." + s, the coordinator subscribes to
// CoordWildcard(fed) and drops a message whose sender (Sender) is not the
// subject's last token. With per-site publish permissions at the server
// (deploy/), a site can then not speak for another site.
func CoordSubject(fed string) string { return SubjectPrefix + "." + fed + ".coord" }

// SiteToCoordSubject is where site sends to the coordinator.
func SiteToCoordSubject(fed, site string) string { return CoordSubject(fed) + "." + site }

// CoordWildcard matches every SiteToCoordSubject of fed.
func CoordWildcard(fed string) string { return CoordSubject(fed) + ".*" }

// SiteOfSubject returns the site of a SiteToCoordSubject of fed.
func SiteOfSubject(fed, subject string) (string, bool) {
	prefix := CoordSubject(fed) + "."
	if len(subject) <= len(prefix) || subject[:len(prefix)] != prefix {
		return "", false
	}
	site := subject[len(prefix):]
	if ValidName("site", site) != nil {
		return "", false
	}
	return site, true
}

// Sender returns the site a site-to-coordinator message claims to come
// from, or false for the other kinds.
func Sender(m Message) (string, bool) {
	switch m := m.(type) {
	case *Join:
		return m.Site, true
	case *Heartbeat:
		return m.Site, true
	case *SiteUpdate:
		return m.Site, true
	case *Leave:
		return m.Site, true
	case *Refuse:
		return m.Site, true
	case *Accept:
		return m.Site, true
	case *Abort:
		return m.From, true
	case *SecAggKeys:
		return m.Site, true
	case *SecAggShares:
		return m.Site, true
	case *SecAggMasked:
		return m.Site, true
	case *SecAggUnmask:
		return m.Site, true
	case *SecAggCheck:
		return m.Site, true
	}
	return "", false
}

// CheckSender checks that a message received on subject (a
// SiteToCoordSubject of fed) comes from the site the subject names.
func CheckSender(fed, subject string, m Message) error {
	site, ok := SiteOfSubject(fed, subject)
	if !ok {
		return fmt.Errorf("protocol: %v on %s: not a site's subject", m.Kind(), subject)
	}
	if from, ok := Sender(m); !ok || from != site {
		return fmt.Errorf("protocol: %v on %s claims to come from %q: dropped (a site speaks only for itself)", m.Kind(), subject, from)
	}
	return nil
}

// SitesSubject is where the coordinator broadcasts to every site.
func SitesSubject(fed string) string { return SubjectPrefix + "." + fed + ".sites" }

// SiteSubject is the direct subject of one site.
func SiteSubject(fed, site string) string { return SubjectPrefix + "." + fed + ".site." + site }

// JobsSubject is where clients submit jobs to the coordinator of fed.
func JobsSubject(fed string) string { return SubjectPrefix + "." + fed + ".jobs" }

// ClientSubject is where the coordinator answers client (a subject token
// the client chose).
func ClientSubject(fed, client string) string { return SubjectPrefix + "." + fed + ".client." + client }
