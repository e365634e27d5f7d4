package protocol

// Subject layout (see the package documentation). The helpers do not
// validate: callers validate names once, with ValidName, when they are
// configured.

// SubjectPrefix is the first token of every pairfed subject.
const SubjectPrefix = "pairfed"

// CoordinatorName is the From of messages the coordinator sends.
const CoordinatorName = "coordinator"

// CoordSubject is where sites send to the coordinator of federation fed.
func CoordSubject(fed string) string { return SubjectPrefix + "." + fed + ".coord" }

// SitesSubject is where the coordinator broadcasts to every site.
func SitesSubject(fed string) string { return SubjectPrefix + "." + fed + ".sites" }

// SiteSubject is the direct subject of one site.
func SiteSubject(fed, site string) string { return SubjectPrefix + "." + fed + ".site." + site }

// JobsSubject is where clients submit jobs to the coordinator of fed.
func JobsSubject(fed string) string { return SubjectPrefix + "." + fed + ".jobs" }

// ClientSubject is where the coordinator answers client (a subject token
// the client chose).
func ClientSubject(fed, client string) string { return SubjectPrefix + "." + fed + ".client." + client }
