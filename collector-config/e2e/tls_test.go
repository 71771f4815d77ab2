package e2e

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testpki"
	"github.com/progressotel/progressotel/progress"
)

// The TLS overlay with PROGRESS_OTLP_TLS_CLIENT_CA_FILE: OTLP over gRPC and
// HTTP needs TLS 1.2 or newer and a client certificate signed by that CA.
// A driver with such a certificate is served; no certificate, a
// certificate from another CA, plain text and TLS 1.1 are refused, and
// nothing of theirs reaches Kafka.
func TestOTLPMutualTLS(t *testing.T) {
	serverCA := testpki.NewCA(t, "collector CA")
	certFile, keyFile, _ := serverCA.Issue(t, "collector", false)
	driverCA := testpki.NewCA(t, "driver CA")
	_, _, driverCert := driverCA.Issue(t, "driver", true)
	_, _, rogueCert := testpki.NewCA(t, "rogue CA").Issue(t, "rogue", true)
	// A server certificate of the collector's own CA is no client
	// certificate of the driver CA either.
	_, _, serverAsClient := serverCA.Issue(t, "not-a-driver", true)

	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, map[string]string{
		"PROGRESS_OTLP_TLS_CERT_FILE":      certFile,
		"PROGRESS_OTLP_TLS_KEY_FILE":       keyFile,
		"PROGRESS_OTLP_TLS_CLIENT_CA_FILE": driverCA.File,
	})
	col.start()

	clientTLS := func(maxVersion uint16, certs ...tls.Certificate) *tls.Config {
		return &tls.Config{RootCAs: serverCA.Pool, MinVersion: tls.VersionTLS10, MaxVersion: maxVersion, Certificates: certs}
	}
	send := func(name string, o driverOpt) error {
		o.noRetry = true
		d := newDriver(t, col.grpc, o)
		if err := d.rec.Record(context.Background(), progress.Event{
			Type: "ansible/PlayStarted", Details: map[string]any{"playName": "mtls-" + name},
			Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}},
		}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return d.lp.ForceFlush(ctx)
	}

	if err := send("good", driverOpt{tls: clientTLS(0, driverCert)}); err != nil {
		t.Fatalf("gRPC with a driver certificate: %v", err)
	}
	for name, o := range map[string]driverOpt{
		"no-cert":          {tls: clientTLS(0)},
		"rogue-cert":       {tls: clientTLS(0, rogueCert)},
		"server-ca-client": {tls: clientTLS(0, serverAsClient)},
		"tls11":            {tls: clientTLS(tls.VersionTLS11, driverCert)},
		"plaintext":        {},
	} {
		if err := send(name, o); err == nil {
			t.Errorf("gRPC %s: export succeeded, want a refusal", name)
		}
	}

	post := func(scheme string, cfg *tls.Config) (int, error) {
		cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := cl.Post(scheme+"://"+col.http+"/v1/logs", "application/json", strings.NewReader(`{"resourceLogs":[]}`))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := post("https", clientTLS(0, driverCert)); err != nil || code != http.StatusOK {
		t.Errorf("HTTPS with a driver certificate: %d, %v; want 200", code, err)
	}
	for name, cfg := range map[string]*tls.Config{
		"no-cert":    clientTLS(0),
		"rogue-cert": clientTLS(0, rogueCert),
		"tls11":      clientTLS(tls.VersionTLS11, driverCert),
	} {
		if code, err := post("https", cfg); err == nil {
			t.Errorf("HTTPS %s: status %d, want a failed handshake", name, code)
		}
	}
	if code, err := post("http", nil); err == nil && code == http.StatusOK {
		t.Errorf("plain HTTP to the TLS listener was served")
	}

	cons.waitFor(t, 60*time.Second, "the event of the driver with a certificate", func(m []message) bool {
		return countMarker(m, "mtls-good") == 1
	})
	time.Sleep(time.Second) // the refused ones would have arrived with it
	if n := len(cons.all()); n != 1 {
		t.Errorf("%d messages on Kafka, want only the one with a certificate:%s", n, summary(cons.all()))
	}
}
