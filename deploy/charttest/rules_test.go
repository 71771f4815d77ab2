package charttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// scrapeLabels are the target labels the Prometheus Operator gives a
// ServiceMonitor's targets: job (the Service's jobLabel label, else its
// name), namespace, service, endpoint (the port name), pod, container and
// instance (the pod's address). They are derived here from the rendered
// ServiceMonitor and the Services its selector picks, so that a selector,
// port or job label that does not match fails the test.
func scrapeLabels(t *testing.T, objs []*unstructured.Unstructured) map[string]map[string]string {
	t.Helper()
	byTier := map[string]map[string]string{}
	for i, sm := range find(objs, "ServiceMonitor") {
		sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		jobLabel, _, _ := unstructured.NestedString(sm.Object, "spec", "jobLabel")
		nsNames, _, _ := unstructured.NestedStringSlice(sm.Object, "spec", "namespaceSelector", "matchNames")
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		if len(endpoints) != 1 {
			t.Fatalf("ServiceMonitor %s: %d endpoints, want 1", sm.GetName(), len(endpoints))
		}
		port, _ := endpoints[0].(map[string]any)["port"].(string)
		var matched int
		for _, svc := range find(objs, "Service") {
			if len(nsNames) > 0 && !contains(nsNames, svc.GetNamespace()) {
				continue
			}
			labels := svc.GetLabels()
			ok := true
			for k, v := range sel {
				if labels[k] != v {
					ok = false
				}
			}
			if !ok {
				continue
			}
			ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
			hasPort := false
			for _, p := range ports {
				if p.(map[string]any)["name"] == port {
					hasPort = true
				}
			}
			if !hasPort {
				t.Errorf("ServiceMonitor %s: Service %s has no port %q", sm.GetName(), svc.GetName(), port)
				continue
			}
			matched++
			job := svc.GetName()
			if v := labels[jobLabel]; jobLabel != "" && v != "" {
				job = v
			}
			tier := sel["app.kubernetes.io/component"]
			byTier[tier] = map[string]string{
				"job": job, "namespace": svc.GetNamespace(), "service": svc.GetName(), "endpoint": port,
				"pod": fmt.Sprintf("%s-0", svc.GetName()), "container": "otelcol", "instance": fmt.Sprintf("10.0.0.%d:8888", i+1),
			}
		}
		if matched != 1 {
			t.Errorf("ServiceMonitor %s selects %d Services, want 1", sm.GetName(), matched)
		}
	}
	return byTier
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func series(name string, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name + "{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%q", k, labels[k])
	}
	b.WriteString("}")
	return b.String()
}

func with(m map[string]string, kv ...string) map[string]string {
	r := map[string]string{}
	for k, v := range m {
		r[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		r[kv[i]] = kv[i+1]
	}
	return r
}

// The chart's PrometheusRule, in promtool (Prometheus' own rule engine),
// on series labelled as the chart's ServiceMonitors make the scrape label
// them: a collector that is down fires ProgressCollectorDown, a tier with
// no target at all fires ProgressCollectorAbsent, and healthy targets
// fire neither.
func TestChartAlertsFireOnScrapeLabels(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	need(t, err == nil, "promtool is not installed (scripts/install-tools.sh installs Debian's prometheus)")
	objs := mustRender(t, "progress", "progress", "-f", allValues)
	rules := find(objs, "PrometheusRule")
	if len(rules) != 1 {
		t.Fatalf("%d PrometheusRules rendered, want 1", len(rules))
	}
	spec, _, _ := unstructured.NestedMap(rules[0].Object, "spec")
	// promtool compares annotations too; this test is about labels.
	groups, _ := spec["groups"].([]any)
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			delete(r.(map[string]any), "annotations")
		}
	}
	dir := t.TempDir()
	b, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	labels := scrapeLabels(t, objs)
	gw, ag := labels["gateway"], labels["agent"]
	if gw == nil || ag == nil {
		t.Fatalf("scrape labels for %v, want agent and gateway", labels)
	}
	type alert struct {
		Labels map[string]string `json:"exp_labels"`
	}
	type check struct {
		EvalTime  string  `json:"eval_time"`
		AlertName string  `json:"alertname"`
		Alerts    []alert `json:"exp_alerts"`
	}
	type in struct {
		Series string `json:"series"`
		Values string `json:"values"`
	}
	type test struct {
		Interval string  `json:"interval"`
		Input    []in    `json:"input_series"`
		Alerts   []check `json:"alert_rule_test"`
	}
	tests := []test{
		{ // healthy: both tiers up
			Interval: "15s",
			Input:    []in{{series("up", gw), "1x80"}, {series("up", ag), "1x80"}},
			Alerts: []check{{EvalTime: "15m", AlertName: "ProgressCollectorDown", Alerts: []alert{}},
				{EvalTime: "15m", AlertName: "ProgressCollectorAbsent", Alerts: []alert{}}},
		},
		{ // a gateway down
			Interval: "15s",
			Input:    []in{{series("up", gw), "1 1 0x80"}, {series("up", ag), "1x80"}},
			Alerts: []check{{EvalTime: "15m", AlertName: "ProgressCollectorDown", Alerts: []alert{{Labels: with(gw, "severity", "critical")}}},
				{EvalTime: "15m", AlertName: "ProgressCollectorAbsent", Alerts: []alert{}}},
		},
		{ // no gateway target at all
			Interval: "15s",
			Input:    []in{{series("up", ag), "1x80"}},
			Alerts: []check{{EvalTime: "15m", AlertName: "ProgressCollectorDown", Alerts: []alert{}},
				{EvalTime: "15m", AlertName: "ProgressCollectorAbsent", Alerts: []alert{{Labels: map[string]string{
					"severity": "critical", "job": gw["job"], "namespace": gw["namespace"]}}}}},
		},
	}
	b, err = yaml.Marshal(map[string]any{"rule_files": []string{"rules.yaml"}, "evaluation_interval": "15s", "tests": tests})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", "test.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s\ntests:\n%s", err, out, b)
	}
	cmd = exec.Command(promtool, "check", "rules", "rules.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}
