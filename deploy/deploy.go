// Package deploy generates what a multi-site pairfed deployment needs
// (`pairfed deploy init`): a certificate authority and TLS certificates
// (ECDSA P-256, Go's crypto), NATS nkey credentials for the coordinator,
// the job client and every site, an Ed25519 secure aggregation signing key
// per site with the roster of their public keys (secagg/round, keys.go:
// separate from the nkeys, which the NATS server has sign its own nonces),
// a random password per site for its
// leaf-node link (stored bcrypt-hashed at the hub), the hub's
// nats-server.conf with TLS required and per-identity subject
// permissions, a leaf-node nats-server config per site, systemd units, a
// docker compose file and an example job script.
//
// The templates are in templates/ (embedded); README.md in this directory
// walks an operator through a 3-site deployment and states the threat
// model.
package deploy

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg/round"
	"github.com/pairfed/pairfed/transport"
	"golang.org/x/crypto/bcrypt"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"q":    strconv.Quote,
	"join": strings.Join,
	"list": quoteList,
	"trimScheme": func(u string) string {
		_, rest, _ := strings.Cut(u, "://")
		return rest
	},
}).ParseFS(templateFS, "templates/*.tmpl"))

// quoteList renders strings as a NATS configuration array.
func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Defaults of Config.
const (
	DefaultPrefix      = "/etc/pairfed"
	DefaultStateDir    = "/var/lib/pairfed"
	DefaultPairfed     = "/usr/local/bin/pairfed"
	DefaultNATSServer  = "/usr/sbin/nats-server"
	DefaultClientPort  = 4222
	DefaultLeafPort    = 7422
	DefaultClusterPort = 6222
	DefaultSitePort    = 4222
	DefaultCertDays    = 825
	DefaultCADays      = 3650
)

// Config describes a deployment. Zero fields take the defaults above.
type Config struct {
	// Federation is the federation name (a subject token).
	Federation string
	// Sites are the site names (subject tokens, distinct).
	Sites []string
	// HubHosts are the DNS names or IP addresses under which sites and the
	// coordinator reach the hub; the first is the one written in URLs.
	// The hub's certificate also names localhost, 127.0.0.1 and ::1.
	// Default: localhost (a single-host rehearsal).
	HubHosts []string
	// HubBind is the address the hub listens on (default 0.0.0.0).
	HubBind string
	// HubNodes, when it names 2 to 9 hosts, makes the hub a cluster of
	// that many nats-server nodes (hub-1, hub-2, ... in the output), one
	// per host, joined by TLS routes on ClusterPort: clients and leaf
	// links list every node and move to another when theirs stops, so the
	// federation outlives the loss of a node (3 nodes: any one). Nodes on
	// one host (a rehearsal: a host named twice) listen on the base ports
	// plus their index (0, 1, 2, ...). Empty: a single hub.
	HubNodes []string
	// ClusterPort is the nodes' route port (default 6222).
	ClusterPort int
	// ClientPort and LeafPort are the hub's client and leaf-node ports.
	ClientPort, LeafPort int
	// SitePorts is the loopback port of each site's local leaf server: one
	// port for every site, or one per site (to run several sites on one
	// host). Default 4222.
	SitePorts []int
	// Prefix is the absolute directory under which every role directory
	// (hub, coordinator, client, site-NAME) is installed on its host: the
	// configs and units refer to files there.
	Prefix string
	// StateDir is the absolute directory of the processes' state
	// (STATEDIR/coordinator, STATEDIR/site-NAME).
	StateDir string
	// Pairfed and NATSServer are the binaries the units run.
	Pairfed, NATSServer string
	// CertValidity and CAValidity bound the certificates' lifetimes.
	CertValidity, CAValidity time.Duration
	// Now is the certificates' start (time.Now).
	Now time.Time
}

// Permissions are the subjects one NATS identity may publish to and
// subscribe to (allow lists: everything else is denied).
type Permissions struct {
	Publish   []string `json:"publish"`
	Subscribe []string `json:"subscribe"`
}

// CoordinatorPermissions: everything of the federation.
func CoordinatorPermissions(fed string) Permissions {
	all := protocol.SubjectPrefix + "." + fed + ".>"
	return Permissions{Publish: []string{all}, Subscribe: []string{all}}
}

// SitePermissions: a site publishes only to the coordinator (joins,
// heartbeats, updates, leaves, refusals, aborts), on its own subject
// protocol.SiteToCoordSubject(fed, site), and receives only the
// broadcasts to all sites and its own direct subject. It can neither
// publish on another site's subject to the coordinator (the coordinator
// drops a message whose body names another site than the subject, so a
// site cannot speak for another), nor read another site's updates (no
// site may subscribe to the coordinator's subjects), nor the messages
// addressed to another site.
func SitePermissions(fed, site string) Permissions {
	return Permissions{
		Publish:   []string{protocol.SiteToCoordSubject(fed, site)},
		Subscribe: []string{protocol.SitesSubject(fed), protocol.SiteSubject(fed, site)},
	}
}

// ClientPermissions: a job client submits jobs and reads job statuses.
// The client subject's last token is chosen at random per submission, so
// the permission is a wildcard: every holder of the client credential
// can read every client's statuses (and the models in them).
func ClientPermissions(fed string) Permissions {
	return Permissions{
		Publish:   []string{protocol.JobsSubject(fed)},
		Subscribe: []string{protocol.ClientSubject(fed, "*")},
	}
}

// Identity is one credential of the deployment (public parts only).
type Identity struct {
	Role string `json:"role"` // coordinator, client, site, worker (a site's local leaf), leaf (a site's link to the hub)
	Site string `json:"site,omitempty"`
	// Nkey is the public user nkey (empty for leaf links).
	Nkey string `json:"nkey,omitempty"`
	// User is the user name of a leaf link (password authentication).
	User        string      `json:"user,omitempty"`
	Permissions Permissions `json:"permissions"`
	// Server is where the identity is accepted: hub or site-NAME;
	// Account its account there (empty: the site server's only account).
	Server  string `json:"server"`
	Account string `json:"account,omitempty"`
}

// File is one generated file.
type File struct {
	Path   string `json:"path"` // relative to the output directory
	Mode   string `json:"mode"`
	Secret bool   `json:"secret"`
}

// Manifest describes a generated deployment (written to manifest.json;
// it holds no secret).
type Manifest struct {
	Federation string   `json:"federation"`
	Sites      []string `json:"sites"`
	HubURL     string   `json:"hub_url"`  // clients: tls://HOST:PORT (a cluster: every node's, comma-separated)
	LeafURL    string   `json:"leaf_url"` // leaf links: tls://HOST:PORT (a cluster: every node's, comma-separated)
	// HubNodes are the directories of a hub cluster's nodes (hub-1, ...);
	// empty for a single hub (hub).
	HubNodes   []string   `json:"hub_nodes,omitempty"`
	SiteURLs   []string   `json:"site_urls"`
	Prefix     string     `json:"prefix"`
	StateDir   string     `json:"state_dir"`
	Identities []Identity `json:"identities"`
	Files      []File     `json:"files"`
	Created    time.Time  `json:"created"`
	CAExpires  time.Time  `json:"ca_expires"`
	CertExpire time.Time  `json:"certs_expire"`
}

// safePath matches what the configs, units and scripts can hold without
// quoting problems.
func safePath(what, p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("deploy: %s %q must be an absolute path", what, p)
	}
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+", c)) {
			return fmt.Errorf("deploy: %s %q: %q is not allowed (letters, digits and / . _ - + only)", what, p, c)
		}
	}
	return nil
}

func validHost(h string) error {
	if net.ParseIP(h) != nil {
		return nil
	}
	if h == "" || len(h) > 253 {
		return fmt.Errorf("deploy: hub host %q is not a host name or IP address", h)
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("deploy: hub host %q is not a host name or IP address", h)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("deploy: hub host %q is not a host name or IP address", h)
			}
		}
	}
	return nil
}

func validPort(what string, p int) error {
	if p < 1 || p > 65535 {
		return fmt.Errorf("deploy: %s %d outside 1..65535", what, p)
	}
	return nil
}

// Validate fills the defaults and checks the configuration.
func (c *Config) Validate() error {
	if err := protocol.ValidName("federation", c.Federation); err != nil {
		return err
	}
	if len(c.Sites) == 0 {
		return errors.New("deploy: no sites")
	}
	if len(c.Sites) > protocol.MaxSites {
		return fmt.Errorf("deploy: %d sites exceed %d", len(c.Sites), protocol.MaxSites)
	}
	seen := map[string]string{} // lower-case name → the name given
	for _, s := range c.Sites {
		if err := protocol.ValidName("site", s); err != nil {
			return err
		}
		if prev, ok := seen[strings.ToLower(s)]; ok {
			if prev == s {
				return fmt.Errorf("deploy: site %q given twice", s)
			}
			// Each site gets files and directories named after it, which
			// collide on a case-insensitive file system (macOS, Windows).
			return fmt.Errorf("deploy: sites %q and %q differ only in case: their files would collide on a case-insensitive file system; rename one of them", prev, s)
		}
		seen[strings.ToLower(s)] = s
	}
	if len(c.HubHosts) == 0 {
		c.HubHosts = []string{"localhost"}
	}
	for _, h := range c.HubHosts {
		if err := validHost(h); err != nil {
			return err
		}
	}
	if c.HubBind == "" {
		c.HubBind = "0.0.0.0"
	}
	if net.ParseIP(c.HubBind) == nil {
		return fmt.Errorf("deploy: hub bind address %q is not an IP address", c.HubBind)
	}
	if c.ClientPort == 0 {
		c.ClientPort = DefaultClientPort
	}
	if c.LeafPort == 0 {
		c.LeafPort = DefaultLeafPort
	}
	if err := validPort("client port", c.ClientPort); err != nil {
		return err
	}
	if err := validPort("leaf-node port", c.LeafPort); err != nil {
		return err
	}
	if c.ClientPort == c.LeafPort {
		return fmt.Errorf("deploy: client and leaf-node ports are both %d", c.ClientPort)
	}
	if len(c.HubNodes) > 0 {
		if len(c.HubNodes) < 2 || len(c.HubNodes) > 9 {
			return fmt.Errorf("deploy: a hub cluster of %d nodes: give 2 to 9 node hosts (3 survive the loss of any one), or none for a single hub", len(c.HubNodes))
		}
		for _, h := range c.HubNodes {
			if err := validHost(h); err != nil {
				return err
			}
		}
		if c.ClusterPort == 0 {
			c.ClusterPort = DefaultClusterPort
		}
		if err := validPort("cluster port", c.ClusterPort); err != nil {
			return err
		}
		n := len(c.HubNodes) - 1
		for _, p := range [][2]int{{c.ClientPort, c.LeafPort}, {c.ClientPort, c.ClusterPort}, {c.LeafPort, c.ClusterPort}} {
			if lo, hi := min(p[0], p[1]), max(p[0], p[1]); hi-lo <= n && c.sharedNodeHost() {
				return fmt.Errorf("deploy: nodes on one host listen on the base ports plus their index: client %d, leaf-node %d and cluster %d ports overlap over %d nodes", c.ClientPort, c.LeafPort, c.ClusterPort, n+1)
			}
			if p[0] == p[1] {
				return fmt.Errorf("deploy: two of the client, leaf-node and cluster ports are %d", p[0])
			}
		}
		// Probe 6 (issue 28): "port 65536 outside 1..65535" named a port
		// no flag gave, and was said of nodes on distinct hosts too, which
		// listen on the base ports themselves.
		for _, p := range []struct {
			flag string
			port int
		}{{"--client-port", c.ClientPort}, {"--leaf-port", c.LeafPort}, {"--cluster-port", c.ClusterPort}} {
			if c.sharedNodeHost() && p.port+n > 65535 {
				return fmt.Errorf("deploy: nodes on one host listen on the base ports plus their index: node %d would listen on %s %d + %d = %d, outside 1..65535; give %s ≤ %d", n+1, p.flag, p.port, n, p.port+n, p.flag, 65535-n)
			}
		}
	}
	switch len(c.SitePorts) {
	case 0:
		c.SitePorts = []int{DefaultSitePort}
	case 1, len(c.Sites):
	default:
		return fmt.Errorf("deploy: %d site ports for %d sites: give one port for all or one per site", len(c.SitePorts), len(c.Sites))
	}
	for _, p := range c.SitePorts {
		if err := validPort("site port", p); err != nil {
			return err
		}
	}
	if len(c.SitePorts) > 1 {
		sorted := slices.Clone(c.SitePorts)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(c.SitePorts) {
			return fmt.Errorf("deploy: site ports %v are not distinct", c.SitePorts)
		}
	}
	for what, p := range map[string]*string{"prefix": &c.Prefix, "state directory": &c.StateDir, "pairfed binary": &c.Pairfed, "nats-server binary": &c.NATSServer} {
		if *p == "" {
			switch what {
			case "prefix":
				*p = DefaultPrefix
			case "state directory":
				*p = DefaultStateDir
			case "pairfed binary":
				*p = DefaultPairfed
			case "nats-server binary":
				*p = DefaultNATSServer
			}
		}
		*p = filepath.Clean(*p)
		if err := safePath(what, *p); err != nil {
			return err
		}
	}
	if c.CertValidity == 0 {
		c.CertValidity = DefaultCertDays * 24 * time.Hour
	}
	if c.CAValidity == 0 {
		c.CAValidity = DefaultCADays * 24 * time.Hour
	}
	if c.CertValidity < 0 || c.CAValidity < 0 {
		return errors.New("deploy: negative validity")
	}
	if c.Now.IsZero() {
		c.Now = time.Now()
	}
	return nil
}

// sharedNodeHost reports whether two hub nodes share a host (their ports
// are then offset by their index).
func (c *Config) sharedNodeHost() bool {
	sorted := slices.Clone(c.HubNodes)
	slices.Sort(sorted)
	return len(slices.Compact(sorted)) != len(c.HubNodes)
}

// hubNode is one nats-server of the hub (the only one without a cluster).
type hubNode struct {
	Dir, Name, Host                   string
	ClientPort, LeafPort, ClusterPort int
	// Routes are the other nodes' route URLs, with the route credential.
	Routes []string
}

// HubNodeDir is the directory of hub node i (0-based) of a cluster.
func HubNodeDir(i int) string { return fmt.Sprintf("hub-%d", i+1) }

// hubNodes returns the hub's nodes: one (HubDir) without a cluster.
func (c *Config) hubNodes(fed, routeUser, routePass string) []hubNode {
	if len(c.HubNodes) == 0 {
		return []hubNode{{Dir: HubDir, Name: "pairfed-" + fed + "-hub", Host: c.HubHosts[0], ClientPort: c.ClientPort, LeafPort: c.LeafPort}}
	}
	off := 0
	if c.sharedNodeHost() {
		off = 1
	}
	nodes := make([]hubNode, len(c.HubNodes))
	for i, h := range c.HubNodes {
		nodes[i] = hubNode{Dir: HubNodeDir(i), Name: fmt.Sprintf("pairfed-%s-hub-%d", fed, i+1), Host: h,
			ClientPort: c.ClientPort + off*i, LeafPort: c.LeafPort + off*i, ClusterPort: c.ClusterPort + off*i}
	}
	for i := range nodes {
		for j, o := range nodes {
			if j != i {
				nodes[i].Routes = append(nodes[i].Routes, "tls://"+routeUser+":"+routePass+"@"+net.JoinHostPort(o.Host, strconv.Itoa(o.ClusterPort)))
			}
		}
	}
	return nodes
}

// SitePort is the loopback port of site i's local leaf server.
func (c *Config) SitePort(i int) int {
	if len(c.SitePorts) == 1 {
		return c.SitePorts[0]
	}
	return c.SitePorts[i]
}

// Directory names of the roles inside the output (and under Prefix).
const (
	CADir          = "ca"
	HubDir         = "hub"
	CoordinatorDir = "coordinator"
	ClientDir      = "client"
)

// SiteDir is the directory of site s.
func SiteDir(s string) string { return "site-" + s }

// LeafUser is the user name of site s's leaf link at the hub.
func LeafUser(s string) string { return "leaf-" + s }

// writer collects the files of a deployment.
type writer struct {
	out   string
	files []File
}

func (w *writer) write(rel string, data []byte, mode fs.FileMode, secret bool) error {
	p := filepath.Join(w.out, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// O_EXCL: never overwrite (nor follow a planted symlink).
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	if err := f.Chmod(mode); err != nil { // against the umask
		f.Close()
		return fmt.Errorf("deploy: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("deploy: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	w.files = append(w.files, File{Path: rel, Mode: fmt.Sprintf("%04o", mode), Secret: secret})
	return nil
}

func (w *writer) render(rel, tmpl string, data any, mode fs.FileMode, secret bool) error {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, tmpl, data); err != nil {
		return fmt.Errorf("deploy: template %s: %w", tmpl, err)
	}
	return w.write(rel, b.Bytes(), mode, secret)
}

// newUser creates a user nkey and returns its public key and seed-file
// content.
func newUser(comment string) (string, []byte, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", nil, fmt.Errorf("deploy: nkey: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return "", nil, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return "", nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n# public key %s\n# SECRET: the nkey seed below authenticates as this identity; keep this file 0600.\n%s\n", comment, pub, seed)
	return pub, b.Bytes(), nil
}

// bcryptCost is the cost of the leaf passwords' hashes (a variable for
// the tests; the passwords have 256 random bits, the cost only slows down
// a search that cannot succeed).
var bcryptCost = bcrypt.DefaultCost

// newPassword draws a 256-bit password (hex: safe in URLs and configs).
func newPassword() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("deploy: password: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// hubAccount is an account of the hub: its users, and the streams it
// exports to and imports from other accounts. Accounts isolate subjects:
// a message published in one account reaches another only through an
// export of the first that the second imports, whatever the publishing
// connection (a client or a leaf node) does. Site S's account exports
// only S's own subject to the coordinator (pairfed.F.coord.S), so even a
// message its leaf link publishes on another site's subject (nats-server
// 2.9 does not check the publish permissions of messages arriving over a
// leaf link) never reaches the coordinator's account.
type hubAccount struct {
	Name, Comment string
	Users         []hubUser
	Exports       []hubExport
	Imports       []hubImport
}

type hubExport struct {
	Subject  string
	Accounts []string
}

type hubImport struct {
	Account, Subject string
}

// Account names at the hub.
const (
	CoordinatorAccount = "coordinator"
	ClientAccount      = "client"
)

// SiteAccount is the hub account of site s.
func SiteAccount(s string) string { return "site-" + s }

// hubAccounts returns the accounts of the hub for fed and sites (users
// left empty).
func hubAccounts(fed string, sites []string) []*hubAccount {
	coord := &hubAccount{Name: CoordinatorAccount, Comment: "the coordinator"}
	client := &hubAccount{Name: ClientAccount, Comment: "job clients",
		Exports: []hubExport{{Subject: protocol.JobsSubject(fed), Accounts: []string{CoordinatorAccount}}},
		Imports: []hubImport{{Account: CoordinatorAccount, Subject: protocol.ClientSubject(fed, "*")}}}
	var siteAccounts []string
	var sitesAcc []*hubAccount
	for _, s := range sites {
		a := SiteAccount(s)
		siteAccounts = append(siteAccounts, a)
		coord.Exports = append(coord.Exports, hubExport{Subject: protocol.SiteSubject(fed, s), Accounts: []string{a}})
		// The coordinator subscribes to protocol.CoordWildcard(fed); each
		// site's exact subject, imported from that site's account only,
		// is delivered to that wildcard subscription.
		coord.Imports = append(coord.Imports, hubImport{Account: a, Subject: protocol.SiteToCoordSubject(fed, s)})
		sitesAcc = append(sitesAcc, &hubAccount{Name: a, Comment: "site " + s,
			Exports: []hubExport{{Subject: protocol.SiteToCoordSubject(fed, s), Accounts: []string{CoordinatorAccount}}},
			Imports: []hubImport{{Account: CoordinatorAccount, Subject: protocol.SitesSubject(fed)}, {Account: CoordinatorAccount, Subject: protocol.SiteSubject(fed, s)}}})
	}
	coord.Exports = append([]hubExport{{Subject: protocol.SitesSubject(fed), Accounts: siteAccounts}}, coord.Exports...)
	coord.Exports = append(coord.Exports, hubExport{Subject: protocol.ClientSubject(fed, "*"), Accounts: []string{ClientAccount}})
	coord.Imports = append(coord.Imports, hubImport{Account: ClientAccount, Subject: protocol.JobsSubject(fed)})
	return append([]*hubAccount{coord, client}, sitesAcc...)
}

// hubUser is a user entry of a hub account.
type hubUser struct {
	Comment  string
	Nkey     string
	User     string
	Password string // bcrypt hash
	Perms    Permissions
}

type siteData struct {
	Name, Dir, WorkerNkey, LeafUser, LeafPassword string
	Port                                          int
	Perms                                         Permissions
}

// tmplData is what the templates see.
type tmplData struct {
	Config     *Config
	Fed        string
	HubHost    string
	HubAliases []string // DNS hub hosts other than localhost (compose aliases)
	HubURL     string
	LeafURL    string
	LeafURLs   []string // every hub node's leaf-node URL
	Hub        hubNode  // the node a per-node template renders
	Nodes      []hubNode
	Cluster    bool
	// RouteUser and RoutePass authenticate the routes between the nodes
	// of a cluster.
	RouteUser, RoutePass string
	Accounts             []*hubAccount
	Sites                []siteData
	Site                 siteData // the site a per-site template renders
	MaxPayload           int
	Created              string
}

// Generate writes a deployment for cfg into out, which must not exist or
// be an empty directory, and returns its manifest.
func Generate(cfg Config, out string) (*Manifest, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("deploy: %s is not empty: refusing to overwrite a deployment", out)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	now := cfg.Now
	fed := cfg.Federation
	w := &writer{out: out}
	m := &Manifest{Federation: fed, Sites: cfg.Sites, Prefix: cfg.Prefix, StateDir: cfg.StateDir, Created: now.UTC().Truncate(time.Second)}
	routeUser, routePass := "route", ""
	if len(cfg.HubNodes) > 0 {
		var err error
		if routePass, err = newPassword(); err != nil {
			return nil, err
		}
	}
	nodes := cfg.hubNodes(fed, routeUser, routePass)
	var hubURLs, leafURLs []string
	for _, n := range nodes {
		hubURLs = append(hubURLs, "tls://"+net.JoinHostPort(n.Host, strconv.Itoa(n.ClientPort)))
		leafURLs = append(leafURLs, "tls://"+net.JoinHostPort(n.Host, strconv.Itoa(n.LeafPort)))
		if len(cfg.HubNodes) > 0 {
			m.HubNodes = append(m.HubNodes, n.Dir)
		}
	}
	m.HubURL = strings.Join(hubURLs, ",")
	m.LeafURL = strings.Join(leafURLs, ",")

	// PKI.
	ca, err := NewCA(fed, now, cfg.CAValidity)
	if err != nil {
		return nil, err
	}
	m.CAExpires = ca.Cert.NotAfter
	caPEM := CertPEM(ca.DER)
	caKey, err := KeyPEM(ca.Key)
	if err != nil {
		return nil, err
	}
	if err := w.write(filepath.Join(CADir, "ca.pem"), caPEM, 0o644, false); err != nil {
		return nil, err
	}
	if err := w.write(filepath.Join(CADir, "ca-key.pem"), caKey, 0o600, true); err != nil {
		return nil, err
	}
	issue := func(dir, name, cn string, server bool, hosts []string) error {
		leaf, err := ca.Issue(cn, server, hosts, now, cfg.CertValidity)
		if err != nil {
			return err
		}
		m.CertExpire = leaf.Cert.NotAfter
		key, err := KeyPEM(leaf.Key)
		if err != nil {
			return err
		}
		if err := w.write(filepath.Join(dir, name+".pem"), CertPEM(leaf.DER), 0o644, false); err != nil {
			return err
		}
		if err := w.write(filepath.Join(dir, name+"-key.pem"), key, 0o600, true); err != nil {
			return err
		}
		return w.write(filepath.Join(dir, "ca.pem"), caPEM, 0o644, false)
	}
	sans := slices.Clone(cfg.HubHosts)
	for _, h := range append(slices.Clone(cfg.HubNodes), "localhost", "127.0.0.1", "::1") {
		if !slices.Contains(sans, h) {
			sans = append(sans, h)
		}
	}
	if len(cfg.HubNodes) == 0 {
		if err := issue(HubDir, "server", "pairfed "+fed+" hub", true, sans); err != nil {
			return nil, err
		}
	}
	for _, n := range nodes {
		if len(cfg.HubNodes) == 0 {
			break
		}
		// A node's certificate serves clients, leaf links and routes,
		// and authenticates it when it dials another node.
		leaf, err := ca.IssueNode("pairfed "+fed+" "+n.Dir, sans, now, cfg.CertValidity)
		if err != nil {
			return nil, err
		}
		m.CertExpire = leaf.Cert.NotAfter
		key, err := KeyPEM(leaf.Key)
		if err != nil {
			return nil, err
		}
		if err := w.write(filepath.Join(n.Dir, "server.pem"), CertPEM(leaf.DER), 0o644, false); err != nil {
			return nil, err
		}
		if err := w.write(filepath.Join(n.Dir, "server-key.pem"), key, 0o600, true); err != nil {
			return nil, err
		}
		if err := w.write(filepath.Join(n.Dir, "ca.pem"), caPEM, 0o644, false); err != nil {
			return nil, err
		}
	}
	if err := issue(CoordinatorDir, "coordinator", "pairfed "+fed+" coordinator", false, nil); err != nil {
		return nil, err
	}
	if err := issue(ClientDir, "client", "pairfed "+fed+" job client", false, nil); err != nil {
		return nil, err
	}

	// Credentials.
	data := &tmplData{Config: &cfg, Fed: fed, HubHost: cfg.HubHosts[0], HubURL: m.HubURL, LeafURL: m.LeafURL, LeafURLs: leafURLs,
		Hub: nodes[0], Nodes: nodes, Cluster: len(cfg.HubNodes) > 0, RouteUser: routeUser, RoutePass: routePass,
		MaxPayload: transport.MaxPayload, Created: m.Created.Format(time.RFC3339)}
	for _, h := range cfg.HubHosts {
		if net.ParseIP(h) == nil && h != "localhost" {
			data.HubAliases = append(data.HubAliases, h)
		}
	}
	data.Accounts = hubAccounts(fed, cfg.Sites)
	account := map[string]*hubAccount{}
	for _, a := range data.Accounts {
		account[a.Name] = a
	}
	addHub := func(id Identity, u hubUser) {
		id.Server = HubDir
		id.Permissions = u.Perms
		m.Identities = append(m.Identities, id)
		a := account[id.Account]
		a.Users = append(a.Users, u)
	}
	pub, seed, err := newUser("pairfed " + fed + ": the coordinator's credential at the hub")
	if err != nil {
		return nil, err
	}
	if err := w.write(filepath.Join(CoordinatorDir, "coordinator.nk"), seed, 0o600, true); err != nil {
		return nil, err
	}
	addHub(Identity{Role: "coordinator", Account: CoordinatorAccount, Nkey: pub}, hubUser{Comment: "coordinator: the whole federation", Nkey: pub, Perms: CoordinatorPermissions(fed)})
	pub, seed, err = newUser("pairfed " + fed + ": the job client's credential at the hub")
	if err != nil {
		return nil, err
	}
	if err := w.write(filepath.Join(ClientDir, "client.nk"), seed, 0o600, true); err != nil {
		return nil, err
	}
	addHub(Identity{Role: "client", Account: ClientAccount, Nkey: pub}, hubUser{Comment: "job client: submits jobs, reads job statuses", Nkey: pub, Perms: ClientPermissions(fed)})

	for i, s := range cfg.Sites {
		dir := SiteDir(s)
		perms := SitePermissions(fed, s)
		if err := issue(dir, "site", "pairfed "+fed+" site "+s, false, nil); err != nil {
			return nil, err
		}
		// The site's own credential at the hub, for a worker that
		// connects directly (no local leaf server).
		pub, seed, err := newUser("pairfed " + fed + ": site " + s + "'s credential at the hub (direct connection without a leaf server)")
		if err != nil {
			return nil, err
		}
		if err := w.write(filepath.Join(dir, "site.nk"), seed, 0o600, true); err != nil {
			return nil, err
		}
		addHub(Identity{Role: "site", Site: s, Account: SiteAccount(s), Nkey: pub}, hubUser{Comment: "site " + s + ", direct connection", Nkey: pub, Perms: perms})
		// The leaf link: password authentication (nats-server before 2.10
		// cannot present an nkey on a leaf-node remote).
		pass, err := newPassword()
		if err != nil {
			return nil, err
		}
		hash, err := bcrypt.GenerateFromPassword([]byte(pass), bcryptCost)
		if err != nil {
			return nil, fmt.Errorf("deploy: bcrypt: %w", err)
		}
		addHub(Identity{Role: "leaf", Site: s, Account: SiteAccount(s), User: LeafUser(s)}, hubUser{Comment: "site " + s + ", leaf-node link", User: LeafUser(s), Password: string(hash), Perms: perms})
		// The worker's credential at its local leaf server.
		wpub, wseed, err := newUser("pairfed " + fed + ": site " + s + "'s worker at its local leaf server")
		if err != nil {
			return nil, err
		}
		if err := w.write(filepath.Join(dir, "worker.nk"), wseed, 0o600, true); err != nil {
			return nil, err
		}
		m.Identities = append(m.Identities, Identity{Role: "worker", Site: s, Nkey: wpub, Permissions: perms, Server: dir})
		sd := siteData{Name: s, Dir: dir, WorkerNkey: wpub, LeafUser: LeafUser(s), LeafPassword: pass, Port: cfg.SitePort(i), Perms: perms}
		data.Sites = append(data.Sites, sd)
		m.SiteURLs = append(m.SiteURLs, "nats://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(sd.Port)))
	}

	if err := writeSecAggKeys(w, cfg.Sites); err != nil {
		return nil, err
	}

	// Configs, units, scripts.
	for _, n := range nodes {
		d := *data
		d.Hub = n
		if err := w.render(filepath.Join(n.Dir, "nats-server.conf"), "hub.conf.tmpl", &d, 0o600, true); err != nil {
			return nil, err
		}
		if err := w.render(filepath.Join(n.Dir, "pairfed-nats-hub.service"), "hub.service.tmpl", &d, 0o644, false); err != nil {
			return nil, err
		}
	}
	if err := w.render(filepath.Join(CoordinatorDir, "coordinator.env"), "coordinator.env.tmpl", data, 0o644, false); err != nil {
		return nil, err
	}
	if err := w.render(filepath.Join(CoordinatorDir, "pairfed-coordinator.service"), "coordinator.service.tmpl", data, 0o644, false); err != nil {
		return nil, err
	}
	if err := w.render(filepath.Join(ClientDir, "submit-job.sh"), "submit-job.sh.tmpl", data, 0o755, false); err != nil {
		return nil, err
	}
	// The example public schema every job carries (submit-job.sh): the
	// operator replaces it with the bounds of the sites' data.
	if err := w.render(filepath.Join(ClientDir, "schema.json"), "schema.json.tmpl", data, 0o644, false); err != nil {
		return nil, err
	}
	for _, sd := range data.Sites {
		d := *data
		d.Site = sd
		if err := w.render(filepath.Join(sd.Dir, "leaf.conf"), "leaf.conf.tmpl", &d, 0o600, true); err != nil {
			return nil, err
		}
		if err := w.render(filepath.Join(sd.Dir, "pairfed-nats-leaf.service"), "leaf.service.tmpl", &d, 0o644, false); err != nil {
			return nil, err
		}
		if err := w.render(filepath.Join(sd.Dir, "worker.env"), "worker.env.tmpl", &d, 0o644, false); err != nil {
			return nil, err
		}
		if err := w.render(filepath.Join(sd.Dir, "pairfed-worker.service"), "worker.service.tmpl", &d, 0o644, false); err != nil {
			return nil, err
		}
	}
	if len(cfg.HubNodes) == 0 {
		if err := w.render("docker-compose.yml", "compose.yml.tmpl", data, 0o644, false); err != nil {
			return nil, err
		}
	}
	if err := w.render("INSTALL.md", "install.md.tmpl", data, 0o644, false); err != nil {
		return nil, err
	}
	m.Files = append(w.files, File{Path: "manifest.json", Mode: "0644"})
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := w.write("manifest.json", append(b, '\n'), 0o644, false); err != nil {
		return nil, err
	}
	return m, nil
}

// SecAggKeyFile and SecAggRosterFile are a site's secure aggregation
// signing key (secret) and the federation's roster of public keys, in the
// site's directory (the roster also in the coordinator's).
const (
	SecAggKeyFile    = "secagg-key.pem"
	SecAggRosterFile = "secagg-roster.json"
)

// writeSecAggKeys issues every site its secure aggregation signing key and
// writes the roster of their public keys next to each key and into the
// coordinator's directory.
func writeSecAggKeys(w *writer, sites []string) error {
	roster := map[string]ed25519.PublicKey{}
	for _, s := range sites {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return fmt.Errorf("deploy: secure aggregation key: %w", err)
		}
		kb, err := round.MarshalSigningKey(priv)
		if err != nil {
			return err
		}
		if err := w.write(filepath.Join(SiteDir(s), SecAggKeyFile), kb, 0o600, true); err != nil {
			return err
		}
		roster[s] = pub
	}
	rb, err := round.MarshalRoster(roster)
	if err != nil {
		return err
	}
	for _, dir := range append([]string{CoordinatorDir}, func() (ds []string) {
		for _, s := range sites {
			ds = append(ds, SiteDir(s))
		}
		return ds
	}()...) {
		if err := w.write(filepath.Join(dir, SecAggRosterFile), rb, 0o644, false); err != nil {
			return err
		}
	}
	return nil
}
