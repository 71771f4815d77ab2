package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test: its certificate
// file (for *_CA_FILE variables), a pool that trusts it, and the key that
// signs the certificates it issues.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
	pool *x509.CertPool
	dir  string
}

var serial atomic.Int64

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{cert: cert, key: key, dir: t.TempDir(), pool: x509.NewCertPool()}
	ca.pool.AddCert(cert)
	ca.file = writePEM(t, filepath.Join(ca.dir, "ca.pem"), "CERTIFICATE", der)
	return ca
}

// issue signs a certificate for 127.0.0.1: a server certificate, or a
// client certificate when client is true. It returns the files and the
// pair for a Go TLS config.
func (ca *testCA) issue(t testing.TB, name string, client bool) (certFile, keyFile string, pair tls.Certificate) {
	t.Helper()
	key := newKey(t)
	usage := x509.ExtKeyUsageServerAuth
	if client {
		usage = x509.ExtKeyUsageClientAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = writePEM(t, filepath.Join(ca.dir, name+".pem"), "CERTIFICATE", der)
	keyFile = writePEM(t, filepath.Join(ca.dir, name+"-key.pem"), "EC PRIVATE KEY", kb)
	pair, err = tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pair
}

func writePEM(t testing.TB, path, typ string, der []byte) string {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serverCertificate writes a server certificate for 127.0.0.1 and its key,
// and returns a client TLS config that trusts its CA.
func serverCertificate(t *testing.T) (certFile, keyFile string, client *tls.Config) {
	t.Helper()
	ca := newTestCA(t, "otelcol-progress test CA")
	certFile, keyFile, _ = ca.issue(t, "server", false)
	return certFile, keyFile, &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12}
}
