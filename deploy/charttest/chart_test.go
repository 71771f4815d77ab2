// Package charttest holds the chart's tests: rendered by the real helm,
// applied server-side to a real API server (kube-apiserver and etcd from the
// repository's bin/, as the kube module's tests run them) with the
// Prometheus Operator's CRDs, and its alert rules run by promtool with the
// labels its ServiceMonitors give the scrape.
package charttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/progressotel/progressotel/deploy/internal/imagetest"
	"github.com/progressotel/progressotel/deploy/internal/kubeapi"
)

var (
	repoRoot, _ = filepath.Abs(filepath.Join("..", ".."))
	chartDir    = filepath.Join(repoRoot, "deploy", "chart")
	allValues   = filepath.Join(chartDir, "ci", "all-values.yaml")
)

var need = imagetest.Need

func helmBin(t testing.TB) string {
	t.Helper()
	p := filepath.Join(repoRoot, "bin", "helm")
	_, err := os.Stat(p)
	need(t, err == nil, "no bin/helm: run make helm")
	return p
}

// render runs helm template for a release in namespace ns.
func render(t testing.TB, release, ns string, args ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	cmd := exec.Command(helmBin(t), append([]string{"template", release, chartDir, "--namespace", ns}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm template: %v: %s", err, stderr.String())
	}
	return decode(out)
}

func decode(b []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var m map[string]any
		if err := d.Decode(&m); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

func mustRender(t testing.TB, release, ns string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render(t, release, ns, args...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func find(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var r []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			r = append(r, o)
		}
	}
	return r
}

func TestMain(m *testing.M) { kubeapi.Main(m) }

// applyAll applies objs server-side, the Namespace first, and fails t for
// each object the API server refuses.
func applyAll(t *testing.T, cfg *rest.Config, objs []*unstructured.Unstructured) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ordered := append(find(objs, "Namespace"), func() (r []*unstructured.Unstructured) {
		for _, o := range objs {
			if o.GetKind() != "Namespace" {
				r = append(r, o)
			}
		}
		return r
	}()...)
	for _, o := range ordered {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Errorf("%s %s: %v", gvk, o.GetName(), err)
			continue
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		// Strict: an unknown or misspelt field is an error, not a warning.
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		force := true
		got, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: "otelcol-progress-chart-test", Force: &force, FieldValidation: "Strict"})
		if err != nil {
			t.Errorf("apply %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
			continue
		}
		if got.GetUID() == "" {
			t.Errorf("apply %s %s: no uid", o.GetKind(), o.GetName())
		}
	}
}

// Every object the chart renders, for each tier and with every switch on,
// is accepted by a real API server (server-side apply), the
// ServiceMonitors and the PrometheusRule by the Prometheus Operator's CRDs.
func TestChartAppliesServerSide(t *testing.T) {
	cfg := kubeapi.Start(t)
	cases := []struct {
		name string
		args []string
		want []string // kinds that must be there
	}{
		{"all", []string{"-f", allValues}, []string{"Namespace", "NetworkPolicy", "PodDisruptionBudget", "StatefulSet", "DaemonSet", "ServiceMonitor", "PrometheusRule", "ConfigMap", "Service"}},
		{"gateway", []string{"--set", "createNamespace=true", "--set", "tier=gateway", "--set", "tenants={tenant-a,tenant-b}", "--set", "kafka.brokers={kafka:9092}",
			"--set", "otlp.token.secretName=otlp-token"}, []string{"Namespace", "NetworkPolicy", "PodDisruptionBudget", "StatefulSet"}},
		{"agent", []string{"--set", "createNamespace=true", "--set", "tier=agent", "--set", "agent.gatewaysDNS=gw.elsewhere.svc", "--set", "otlp.allowUnauthenticated=true",
			"--set", "monitoring.serviceMonitor.enabled=true", "--set", "monitoring.prometheusRule.enabled=true"}, []string{"Namespace", "DaemonSet", "NetworkPolicy", "ServiceMonitor"}},
		// agents presenting a token to gateways elsewhere, whose CA is in a
		// Secret of its own
		{"agent-token", []string{"--set", "createNamespace=true", "--set", "tier=agent", "--set", "agent.gatewaysDNS=gw.elsewhere.svc", "--set", "otlp.token.secretName=otlp-token",
			"--set", "gatewayAuth.token.secretName=gw-token", "--set", "gatewayAuth.tls.secretName=gw-ca"}, []string{"Namespace", "DaemonSet", "NetworkPolicy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ns := "progress-" + c.name
			objs := mustRender(t, "progress", ns, c.args...)
			for _, k := range c.want {
				if len(find(objs, k)) == 0 {
					t.Errorf("no %s rendered", k)
				}
			}
			applyAll(t, cfg, objs)
		})
	}
}

// A release that could not work is refused at render time, naming the
// value to set.
func TestChartRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "tenants={a}", "--set", "kafka.brokers={k:9092}"}, "otlp.token.secretName"},
		{[]string{"--set", "otlp.allowUnauthenticated=true", "--set", "kafka.brokers={k:9092}"}, "tenants"},
		{[]string{"--set", "otlp.allowUnauthenticated=true", "--set", "tenants={a}"}, "kafka.brokers"},
		{[]string{"--set", "otlp.allowUnauthenticated=true", "--set", "tenants={a/b}", "--set", "kafka.brokers={k:9092}"}, "invalid tenant id"},
		{[]string{"--set", "otlp.allowUnauthenticated=true", "--set", "tenants={a,a}", "--set", "kafka.brokers={k:9092}"}, "duplicate tenant"},
		{[]string{"--set", "otlp.allowUnauthenticated=true", "--set", "tier=agent"}, "agent.gatewaysDNS"},
		{[]string{"--set", "otlp.allowUnauthenticated=true", "--set", "tier=single"}, "want two-tier, gateway or agent"},
		{[]string{"--set", "otlp.allowUnauthenticated=true", "--set", "tenants={a}", "--set", "kafka.brokers={k:9092}", "--set", "gatewayAuth.token.secretName=t"}, "gatewayAuth.tls.secretName"},
		{[]string{"--set", "otlp.token.secretName=o", "--set", "tier=gateway", "--set", "tenants={a}", "--set", "kafka.brokers={k:9092}",
			"--set", "gatewayAuth.token.secretName=t", "--set", "gatewayAuth.tls.secretName=c"}, "otlp.token"},
	} {
		_, err := render(t, "progress", "progress", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want a refusal naming %q", c.args, err, c.want)
		}
	}
}

// collector-config/k8s/otelcol-progress.yaml is the chart rendered with
// ci/manifests-values.yaml (make k8s-manifests), so that the plain
// manifests, which the kube module's tests check strictly, are the chart's.
func TestPlainManifestsAreTheChart(t *testing.T) {
	cmd := exec.Command(helmBin(t), "template", "progress", chartDir, "-n", "progress", "-f", filepath.Join(chartDir, "ci", "manifests-values.yaml"))
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(repoRoot, "collector-config", "k8s", "otelcol-progress.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Below its two-line header.
	if parts := bytes.SplitN(got, []byte("\n"), 3); len(parts) != 3 || !bytes.Equal(parts[2], want) {
		t.Errorf("collector-config/k8s/otelcol-progress.yaml is not the chart's render: run make k8s-manifests")
	}
}
