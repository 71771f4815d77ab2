package e2e

import (
	"crypto/tls"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testpki"
)

// serverCertificate writes a server certificate for 127.0.0.1 and its key,
// and returns a client TLS config that trusts its CA.
func serverCertificate(t *testing.T) (certFile, keyFile string, client *tls.Config) {
	t.Helper()
	ca := testpki.NewCA(t, "otelcol-progress test CA")
	certFile, keyFile, _ = ca.Issue(t, "server", false)
	return certFile, keyFile, &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}
}
