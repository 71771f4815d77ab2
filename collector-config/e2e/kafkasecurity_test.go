package e2e

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/progressotel/progressotel/internal/testkit/testpki"
	"github.com/progressotel/progressotel/progress"
)

// Kafka over TLS with a client certificate and SASL/SCRAM-SHA-512, set up
// with the documented variables only (TNCO_KAFKA_TLS_CA_FILE and friends,
// TNCO_KAFKA_SASL as YAML): events reach a broker that requires all three,
// and the password never shows in the collector's output.
func TestKafkaSASLOverTLS(t *testing.T) {
	const user, password = "tnco", "sasl-pw-7d9b1c52"
	kafkaCA := testpki.NewCA(t, "kafka CA")
	_, _, brokerCert := kafkaCA.Issue(t, "broker", false)
	clientCA := testpki.NewCA(t, "kafka client CA")
	certFile, keyFile, clientCert := clientCA.Issue(t, "otelcol", true)

	b := startBroker(t,
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{brokerCert}, ClientAuth: tls.RequireAndVerifyClientCert,
			ClientCAs: clientCA.Pool, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", user, password))
	cons := startConsumer(t, b.addr(),
		kgo.DialTLSConfig(&tls.Config{RootCAs: kafkaCA.Pool, Certificates: []tls.Certificate{clientCert}, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism()))
	col := newCollector(t, b.addr(), []string{"tenant-a"}, map[string]string{
		"TNCO_KAFKA_TLS_CA_FILE":   kafkaCA.File,
		"TNCO_KAFKA_TLS_CERT_FILE": certFile,
		"TNCO_KAFKA_TLS_KEY_FILE":  keyFile,
		"TNCO_KAFKA_SASL":          "{mechanism: SCRAM-SHA-512, username: " + user + ", password: " + password + "}",
	})
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})
	for i, tenant := range []string{"tenant-a", ""} { // a tenant topic and the unrouted one
		env := progress.Envelope{}
		if tenant != "" {
			env.Scope = map[string]string{"tenant": tenant}
		}
		if err := d.rec.Record(context.Background(), progress.Event{
			Type: "ansible/PlayStarted", Details: map[string]any{"playName": "over-sasl-tls", "n": i}, Envelope: env,
		}); err != nil {
			t.Fatal(err)
		}
	}
	d.flush(t)
	msgs := cons.waitFor(t, 60*time.Second, "both events", func(m []message) bool { return countMarker(m, "over-sasl-tls") == 2 })
	if len(onTopic(msgs, "progress_events_tenant-a")) != 1 || len(onTopic(msgs, "progress_unrouted")) != 1 {
		t.Errorf("want one event on each topic:%s", summary(msgs))
	}
	if strings.Contains(col.out.String(), password) {
		t.Errorf("the SASL password is in the collector's output")
	}
	if strings.Contains(col.out.String(), saslRefused) {
		t.Errorf("the collector reports a SASL failure with the right password")
	}
}

// saslRefused is what the collector logs when Kafka refuses its SASL
// authentication (collector-config/otelcol/kafkasasl.go).
const saslRefused = "Kafka refused the SASL authentication"

// A wrong SASL password delivers nothing and loses nothing: the events wait in the persistent queue, visibly,
// until the configuration is fixed and the collector restarted on the same
// storage.
func TestKafkaAuthFailureKeepsEvents(t *testing.T) {
	const user, password = "tnco", "right-password"
	kafkaCA := testpki.NewCA(t, "kafka CA")
	_, _, brokerCert := kafkaCA.Issue(t, "broker", false)
	b := startBroker(t,
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{brokerCert}, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", user, password))
	cons := startConsumer(t, b.addr(), kgo.DialTLSConfig(&tls.Config{RootCAs: kafkaCA.Pool, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism()))
	env := func(pw string) map[string]string {
		return map[string]string{
			"TNCO_KAFKA_TLS_CA_FILE": kafkaCA.File,
			"TNCO_KAFKA_SASL":        "{mechanism: SCRAM-SHA-512, username: " + user + ", password: " + pw + "}",
		}
	}
	col := newCollector(t, b.addr(), []string{"tenant-a"}, env("wrong-password"))
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})
	recordPhase(t, d, "wrong-password", 20)
	waitQueued(t, col, 20)
	time.Sleep(3 * time.Second) // several attempts
	if n := len(cons.all()); n != 0 {
		t.Fatalf("%d messages with a wrong password", n)
	}
	// The failure itself, named: not the word "sasl", which the table of
	// protocol versions the exporter logs at every start holds too.
	if out := col.out.String(); !strings.Contains(out, saslRefused) || !strings.Contains(out, `"username": "`+user+`"`) {
		t.Errorf("the collector's log does not name the SASL failure (%q for user %s)", saslRefused, user)
	}
	if strings.Contains(col.out.String(), "wrong-password") {
		t.Errorf("the SASL password is in the collector's output")
	}
	if q := col.metric("otelcol_exporter_queue_size", map[string]string{"exporter": "kafka/tenant_tenant-a"}); q == 0 {
		t.Errorf("the events left the queue while the broker refused the client")
	}
	col.stop()

	fixedEnv := env(password)
	fixedEnv["PROGRESS_STORAGE_DIR"] = col.storage
	fixed := newCollector(t, b.addr(), []string{"tenant-a"}, fixedEnv)
	fixed.start()
	waitPhase(t, cons, "wrong-password", 20)
}
