// Package doctest runs every command of docs/deploy.md, in order, in one
// bash: steps 1-8 against a real API server and a registry on 127.0.0.1,
// steps 9-10 against the image run from its unpacked root as an agent in
// front of a gateway, with a Kafka-protocol broker (kfake). An API server
// runs no pods, so this is where the collectors stand in for the chart's.
package doctest

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/progressotel/progressotel/deploy/internal/imagetest"
	"github.com/progressotel/progressotel/deploy/internal/kubeapi"
)

func TestMain(m *testing.M) { kubeapi.Main(m) }

// commands are the page's sh blocks, in order.
func commands(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllSubmatch(b, -1)
	if len(blocks) < 10 {
		t.Fatalf("%s has %d sh blocks, want one per step (10)", page, len(blocks))
	}
	var script strings.Builder
	script.WriteString("set -euo pipefail\nset -x\n")
	for _, m := range blocks {
		script.Write(m[1])
	}
	return script.String()
}

func TestDeployPage(t *testing.T) {
	root := imagetest.RepoRoot()
	script := commands(t, filepath.Join(root, "docs", "deploy.md"))
	_, err := exec.LookPath("curl")
	imagetest.Need(t, err == nil, "no curl")
	_, err = os.Stat(filepath.Join(root, "bin", "helm"))
	imagetest.Need(t, err == nil, "no bin/helm: run make helm")

	cfg := kubeapi.Start(t)
	kubeconfig, err := kubeapi.KubeConfig(cfg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	regHost := strings.TrimPrefix(reg.URL, "http://")

	// Steps 9-10's collectors: a gateway (tier two-tier's, no token, the
	// tenants, Kafka) and an agent (the token) in front of it.
	bu := imagetest.Unpack(t)
	broker := imagetest.Broker(t)
	token := "doctest-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	gwGRPC := "127.0.0.1:" + strconv.Itoa(imagetest.FreePort(t))
	gwMetrics := strconv.Itoa(imagetest.FreePort(t))
	if _, err := bu.Start(t, []string{"PROGRESS_TIER=gateway", "PROGRESS_TENANTS=tenant-a tenant-b", "TNCO_KAFKA_BROKERS=" + broker,
		"PROGRESS_OTLP_GRPC_ENDPOINT=" + gwGRPC, "PROGRESS_METRICS_PORT=" + gwMetrics,
		"PROGRESS_STORAGE_DIR=/var/lib/otelcol-progress/gateway"}); err != nil {
		t.Fatal(err)
	}
	agent, err := bu.Start(t, []string{"PROGRESS_TIER=agent", "PROGRESS_GATEWAYS=[" + gwGRPC + "]",
		"PROGRESS_OTLP_BEARER_TOKEN=" + token, "PROGRESS_STORAGE_DIR=/var/lib/otelcol-progress/agent"})
	if err != nil {
		t.Fatal(err)
	}

	// The page writes two files and a layout into the working tree.
	t.Cleanup(func() {
		for _, f := range []string{"progress-secrets.yaml", "progress-values.yaml", "bin/image/layout"} {
			_ = os.RemoveAll(filepath.Join(root, f))
		}
	})
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "REGISTRY="+regHost, "OTLP_TOKEN="+token,
		"AGENT="+agent.HTTP, "GATEWAY_METRICS=127.0.0.1:"+gwMetrics, "OTEL_LOGS_EXPORTER=", "OTEL_TRACES_EXPORTER=none")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("docs/deploy.md: %v\n%s", err, out.String())
	}

	// What the steps claim: the image in the registry, the release's
	// objects in the API server, both tenants sent to Kafka.
	ref, err := name.ParseReference(regHost + "/otelcol-progress:0.158.0-progressotel")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Head(ref); err != nil {
		t.Errorf("the image is not in the registry: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, "progress-agent"},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, "progress-gateway"},
		{schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, "progress-gateway"},
		{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, "progress-agent"},
		{schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}, "progress-gateway"},
		{schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"}, "progress"},
		{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "progress-otlp-token"},
	} {
		if _, err := dyn.Resource(o.gvr).Namespace("progress").Get(ctx, o.name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s %s: %v", o.gvr.Resource, o.name, err)
		}
	}
	for _, tenant := range []string{"tenant-a", "tenant-b"} {
		if !regexp.MustCompile(`otelcol_exporter_sent_log_records\{[^}]*exporter="kafka/tenant_` + tenant + `"[^}]*\} [1-9]`).Match(out.Bytes()) {
			t.Errorf("step 10 did not show %s's records sent:\n%s", tenant, out.String())
		}
	}
}
