package deploy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// CA is a certificate authority: its certificate and ECDSA P-256 key.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	DER  []byte
}

// Leaf is a certificate issued by a CA with its key.
type Leaf struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	DER  []byte
}

// serial draws a random 128-bit positive serial number (RFC 5280 allows
// at most 20 octets).
func serial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("deploy: serial number: %w", err)
	}
	return s.Add(s, big.NewInt(1)), nil
}

// NewCA creates a self-signed CA for federation fed, valid from now for
// the given duration. It may only sign end-entity certificates
// (MaxPathLen 0).
func NewCA(fed string, now time.Time, valid time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("deploy: CA key: %w", err)
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: "pairfed " + fed + " CA", Organization: []string{"pairfed federation " + fed}},
		NotBefore:             now.Add(-5 * time.Minute),
		NotAfter:              now.Add(valid),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("deploy: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, DER: der}, nil
}

// Issue signs an end-entity certificate for commonName. server makes it a
// TLS server certificate (ExtKeyUsageServerAuth) for the names in hosts
// (IP addresses become IP SANs, the rest DNS SANs); otherwise it is a
// client certificate (ExtKeyUsageClientAuth). The validity ends no later
// than the CA's.
func (ca *CA) Issue(commonName string, server bool, hosts []string, now time.Time, valid time.Duration) (*Leaf, error) {
	return ca.issue(commonName, server, false, hosts, now, valid)
}

// IssueNode signs the certificate of a node of a hub cluster: a TLS
// server certificate for hosts that is also a client certificate
// (ExtKeyUsageServerAuth and ClientAuth), which a node presents when it
// dials another node's cluster port (routes verify both ends).
func (ca *CA) IssueNode(commonName string, hosts []string, now time.Time, valid time.Duration) (*Leaf, error) {
	return ca.issue(commonName, true, true, hosts, now, valid)
}

func (ca *CA) issue(commonName string, server, route bool, hosts []string, now time.Time, valid time.Duration) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("deploy: key for %s: %w", commonName, err)
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(valid)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: commonName, Organization: ca.Cert.Subject.Organization},
		NotBefore:             now.Add(-5 * time.Minute),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		if route {
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
		}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("deploy: certificate for %s: %w", commonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Leaf{Cert: cert, Key: key, DER: der}, nil
}

// CertPEM encodes a DER certificate.
func CertPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// KeyPEM encodes an ECDSA key as PKCS #8.
func KeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
