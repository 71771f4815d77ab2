package otlptest

import (
	"crypto/tls"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testpki"
)

// NewCert returns a server certificate for 127.0.0.1 and the path of a
// PEM file holding its CA's certificate, for OTEL_EXPORTER_OTLP_CERTIFICATE.
func NewCert(t testing.TB) (tls.Certificate, string) {
	t.Helper()
	ca := testpki.NewCA(t, "otlptest CA")
	_, _, pair := ca.Issue(t, "otlptest", false)
	return pair, ca.File
}
