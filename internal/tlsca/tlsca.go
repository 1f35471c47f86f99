// Package tlsca creates, once, a local certificate authority and a server certificate signed
// by it, so that cairn can serve custom-resource response URLs over HTTPS: many handler
// libraries (npm cfn-response and friends) only speak HTTPS on port 443. Clients trust the CA
// with NODE_EXTRA_CA_CERTS or SSL_CERT_FILE. Keys are ECDSA P-256 and stay on disk, mode 0600.
// It imports only the standard library.
package tlsca

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/atomicfile"
)

// File names inside the directory given to Ensure.
const (
	CAFile      = "ca.pem"
	CAKeyFile   = "ca-key.pem"
	CertFile    = "server.pem"
	CertKeyFile = "server-key.pem"
)

// Validity periods. The leaf is re-issued when less than RenewBefore of it is left.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	LeafValidity = 365 * 24 * time.Hour
	RenewBefore  = 30 * 24 * time.Hour
)

// DefaultHosts are in every server certificate.
var DefaultHosts = []string{"localhost", "127.0.0.1", "::1"}

// Files are the paths of the CA and server certificate that Ensure made or found.
type Files struct {
	CA      string // CA certificate (PEM): what clients trust
	CAKey   string
	Cert    string // server certificate (PEM)
	CertKey string
	Hosts   []string // the names and addresses the server certificate covers, sorted
}

// TLSConfig loads the server certificate and returns a server configuration using it.
func (f Files) TLSConfig() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(f.Cert, f.CertKey)
	if err != nil {
		return nil, fmt.Errorf("cannot load server certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// CertPool returns a pool holding only the CA, for clients (and tests) that trust it.
func (f Files) CertPool() (*x509.CertPool, error) {
	b, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, fmt.Errorf("cannot read CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("cannot read CA certificate %s: no PEM certificate", f.CA)
	}
	return pool, nil
}

// Ensure makes sure dir holds a CA and a server certificate for hosts (DNS names or IP
// addresses; DefaultHosts are always added). The CA is created when dir has none and is never
// replaced; the server certificate is (re-)issued when it is missing, covers other hosts, was
// signed by another CA or expires within RenewBefore. Both private keys are written mode 0600.
func Ensure(dir string, hosts []string) (Files, error) {
	f := Files{
		CA: filepath.Join(dir, CAFile), CAKey: filepath.Join(dir, CAKeyFile),
		Cert: filepath.Join(dir, CertFile), CertKey: filepath.Join(dir, CertKeyFile),
		Hosts: normalize(append(slices.Clone(DefaultHosts), hosts...)),
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Files{}, fmt.Errorf("cannot create TLS directory: %w", err)
	}
	ca, caKey, err := loadOrCreateCA(f)
	if err != nil {
		return Files{}, err
	}
	now := time.Now()
	if leafIsGood(f, ca, now) {
		return f, nil
	}
	if err := issueLeaf(f, ca, caKey, now); err != nil {
		return Files{}, err
	}
	return f, nil
}

// normalize lower-cases names, strips brackets from IPv6 literals, drops empties and
// duplicates, and sorts.
func normalize(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h), "["), "]"))
		if ip := net.ParseIP(h); ip != nil {
			h = ip.String()
		}
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

func loadOrCreateCA(f Files) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	_, certErr := os.Stat(f.CA)
	_, keyErr := os.Stat(f.CAKey)
	switch {
	case errors.Is(certErr, fs.ErrNotExist) && errors.Is(keyErr, fs.ErrNotExist):
		return createCA(f)
	case certErr != nil:
		return nil, nil, fmt.Errorf("cannot use the CA: %w", certErr)
	case keyErr != nil:
		return nil, nil, fmt.Errorf("cannot use the CA: %w", keyErr)
	}
	cert, err := readCert(f.CA)
	if err != nil {
		return nil, nil, err
	}
	key, err := readKey(f.CAKey)
	if err != nil {
		return nil, nil, err
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, fmt.Errorf("cannot use the CA: %s does not hold the key of %s", f.CAKey, f.CA)
	}
	return cert, key, nil
}

func createCA(f Files) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot generate CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"cairn"}, CommonName: "cairn local CA " + serial.Text(16)[:8]},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
		SubjectKeyId:          keyID(&key.PublicKey),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot parse CA certificate: %w", err)
	}
	// The key first: a CA certificate without its key would block the next start.
	if err := writeKey(f.CAKey, key); err != nil {
		return nil, nil, err
	}
	if err := writePEM(f.CA, "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

// leafIsGood reports whether the server certificate on disk can be kept.
func leafIsGood(f Files, ca *x509.Certificate, now time.Time) bool {
	pair, err := tls.LoadX509KeyPair(f.Cert, f.CertKey)
	if err != nil {
		return false
	}
	leaf := pair.Leaf
	if leaf == nil || now.Add(RenewBefore).After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		return false
	}
	if leaf.CheckSignatureFrom(ca) != nil {
		return false
	}
	return slices.Equal(hostsOf(leaf), f.Hosts)
}

func hostsOf(c *x509.Certificate) []string {
	var hosts []string
	hosts = append(hosts, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		hosts = append(hosts, ip.String())
	}
	return normalize(hosts)
}

func issueLeaf(f Files, ca *x509.Certificate, caKey *ecdsa.PrivateKey, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("cannot generate server key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"cairn"}, CommonName: f.Hosts[0]},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(LeafValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		AuthorityKeyId:        ca.SubjectKeyId,
	}
	for _, h := range f.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if slices.Contains(tmpl.DNSNames, "localhost") {
		tmpl.Subject.CommonName = "localhost"
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("cannot create server certificate: %w", err)
	}
	if err := writeKey(f.CertKey, key); err != nil {
		return err
	}
	return writePEM(f.Cert, "CERTIFICATE", der, 0o644)
}

func newSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("cannot generate serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil // never zero
}

func keyID(pub *ecdsa.PublicKey) []byte {
	der, _ := x509.MarshalPKIXPublicKey(pub) // cannot fail for a P-256 key
	sum := sha256.Sum256(der)
	return sum[:20]
}

func readCert(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read certificate: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("cannot read certificate %s: no PEM CERTIFICATE block", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("cannot parse certificate %s: %w", path, err)
	}
	return cert, nil
}

func readKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read key: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("cannot read key %s: no PEM PRIVATE KEY block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("cannot parse key %s: %w", path, err)
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("cannot use key %s: %T is not an ECDSA key", path, k)
	}
	return key, nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("cannot encode key: %w", err)
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

// writePEM writes atomically (temporary file, then rename) with mode perm.
func writePEM(path, typ string, der []byte, perm fs.FileMode) error {
	var buf bytes.Buffer
	if err := pem.Encode(&buf, &pem.Block{Type: typ, Bytes: der}); err != nil {
		return fmt.Errorf("cannot encode %s: %w", path, err)
	}
	if err := atomicfile.Write(path, buf.Bytes(), perm); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}
