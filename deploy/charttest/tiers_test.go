package charttest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/progressotel/progressotel/deploy/internal/imagetest"
)

// The chart's two tiers with gatewayAuth, run: the agent and the gateway
// start from the image with the environment and arguments the chart gives
// their containers (Secrets and the ConfigMap resolved, the Secrets' files
// where the chart mounts them, the Service's name resolving to the
// gateway through /etc/hosts as the cluster's DNS would). The gateway
// refuses a request without the token; the agent presents it over TLS,
// checks the gateway's certificate for the Service's name although it
// dials the address, and a driver's event reaches its tenant's topic.
func TestChartTiersTokenRuns(t *testing.T) {
	bu := imagetest.Unpack(t)
	broker := imagetest.Broker(t)
	gwPort := imagetest.FreePort(t)
	objs := mustRender(t, "progress", "progress", "--set", "tenants={tenant-a}", "--set", "kafka.brokers={"+broker+"}",
		"--set", "otlp.token.secretName=otlp", "--set", "gatewayAuth.token.secretName=gw", "--set", "gatewayAuth.tls.secretName=gw-tls",
		"--set", "agent.gatewaysPort="+strconv.Itoa(gwPort))
	var gateway, agent corev1.Container
	configMaps := map[string]map[string]string{}
	for _, o := range objs {
		var tpl struct {
			Spec struct {
				Template corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		switch o.GetKind() {
		case "StatefulSet", "DaemonSet":
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &tpl); err != nil {
				t.Fatal(err)
			}
			if o.GetKind() == "StatefulSet" {
				gateway = tpl.Spec.Template.Spec.Containers[0]
			} else {
				agent = tpl.Spec.Template.Spec.Containers[0]
			}
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cm); err != nil {
				t.Fatal(err)
			}
			configMaps[cm.Name] = cm.Data
		}
	}
	dnsName := env(agent, "PROGRESS_GATEWAYS_DNS")
	if dnsName == nil || gateway.Name == "" {
		t.Fatalf("no gateway or no agent with PROGRESS_GATEWAYS_DNS rendered")
	}

	// The Secrets: the tokens, and the gateways' certificate for the
	// Service's name with its CA, as cert-manager would issue them.
	otlpToken, gwToken := "otlp-"+strconv.FormatInt(time.Now().UnixNano(), 36), "gw-"+strconv.FormatInt(time.Now().UnixNano(), 36)
	caPEM, certPEM, keyPEM := certificate(t, dnsName.Value)
	secrets := map[string]map[string]string{
		"otlp":   {"token": otlpToken},
		"gw":     {"token": gwToken},
		"gw-tls": {"tls.crt": certPEM, "tls.key": keyPEM, "ca.crt": caPEM},
	}
	for _, c := range []corev1.Container{gateway, agent} {
		for _, m := range c.VolumeMounts {
			if m.Name != "gateway-tls" {
				continue
			}
			dir := filepath.Join(bu.Rootfs, m.MountPath)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for k, v := range secrets["gw-tls"] {
				if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := os.WriteFile(filepath.Join(bu.Rootfs, "etc", "hosts"), []byte("127.0.0.1 "+dnsName.Value+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	gw, err := bu.Start(t, podEnv(t, gateway, secrets, configMaps,
		"PROGRESS_OTLP_GRPC_ENDPOINT=127.0.0.1:"+strconv.Itoa(gwPort), "PROGRESS_STORAGE_DIR=/var/lib/otelcol-progress/gateway"))
	if err != nil {
		t.Fatal(err)
	}
	// Over TLS, for the Service's name, and not without the token.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(caPEM))
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: dnsName.Value}}}
	resp, err := client.Post("https://"+gw.HTTP+"/v1/logs", "application/x-protobuf", bytes.NewReader(nil))
	if err != nil {
		t.Fatalf("the gateway's OTLP/HTTP over TLS for %s: %v", dnsName.Value, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the gateway answered a request without a token with %s, want 401", resp.Status)
	}

	ag, err := bu.StartArgs(t, podEnv(t, agent, secrets, configMaps, "PROGRESS_STORAGE_DIR=/var/lib/otelcol-progress/agent"), agent.Args)
	if err != nil {
		t.Fatal(err)
	}
	po := imagetest.Progressotel(t)
	emit := exec.Command(po, "emit", "--type", "deploy/TiersToken", "--tenant", "tenant-a", "--detail", "marker=tiers-token")
	emit.Env = append(os.Environ(), "OTEL_LOGS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+ag.HTTP,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer "+otlpToken,
		"OTEL_METRICS_EXPORTER=none", "OTEL_TRACES_EXPORTER=none")
	if o, err := emit.CombinedOutput(); err != nil {
		t.Fatalf("progressotel emit: %v: %s", err, o)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics("progress_events_tenant-a"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for found := false; !found; {
		if ctx.Err() != nil {
			t.Fatalf("no record on progress_events_tenant-a\nagent:\n%s\ngateway:\n%s", ag.Out, gw.Out)
		}
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			found = found || bytes.Contains(r.Value, []byte("tiers-token"))
		})
	}
}

// podEnv is c's environment with its Secret and ConfigMap references
// resolved, without the listeners (imagetest binds them to 127.0.0.1),
// and extra on top.
func podEnv(t *testing.T, c corev1.Container, secrets, configMaps map[string]map[string]string, extra ...string) []string {
	t.Helper()
	var out []string
	for _, e := range c.Env {
		switch e.Name {
		case "PROGRESS_OTLP_GRPC_ENDPOINT", "PROGRESS_OTLP_HTTP_ENDPOINT", "PROGRESS_HEALTH_ENDPOINT", "PROGRESS_METRICS_HOST", "PROGRESS_METRICS_PORT":
			continue
		}
		v := e.Value
		if f := e.ValueFrom; f != nil {
			var ok bool
			switch {
			case f.SecretKeyRef != nil:
				v, ok = secrets[f.SecretKeyRef.Name][f.SecretKeyRef.Key]
			case f.ConfigMapKeyRef != nil:
				v, ok = configMaps[f.ConfigMapKeyRef.Name][f.ConfigMapKeyRef.Key]
			}
			if !ok {
				t.Fatalf("%s: %s from %+v: the test has no such value", c.Name, e.Name, f)
			}
		}
		out = append(out, e.Name+"="+v)
	}
	return append(out, extra...)
}

// certificate returns a CA and a server certificate and key for name,
// PEM-encoded.
func certificate(t *testing.T, name string) (ca, cert, key string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "progress test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// The Service's name only: not 127.0.0.1, the address the agent dials.
	srvTpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(typ string, b []byte) string { return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b})) }
	return enc("CERTIFICATE", caDER), enc("CERTIFICATE", srvDER), enc("EC PRIVATE KEY", keyDER)
}
