package kube_test

// The Kubernetes manifests of the collector's two tiers
// (collector-config/k8s, docs/collector.md "Scaling out"), checked here
// because this module already depends on the k8s.io/api types: every
// document decodes strictly (an unknown or misspelt field fails) into its
// type, and the pieces fit together the way the tiers need.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const collectorConfig = "../collector-config"

type manifests struct {
	services     []corev1.Service
	statefulSets []appsv1.StatefulSet
	daemonSets   []appsv1.DaemonSet
	configMaps   []corev1.ConfigMap
	pdbs         []policyv1.PodDisruptionBudget
}

func decodeManifests(t *testing.T) manifests {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(collectorConfig, "k8s", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s/k8s: %v", collectorConfig, err)
	}
	var m manifests
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
			if strings.TrimSpace(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(doc, "")) == "" {
				continue
			}
			js, err := utilyaml.ToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			var tm metav1.TypeMeta
			if err := json.Unmarshal(js, &tm); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			var obj any
			switch tm.APIVersion + " " + tm.Kind {
			case "v1 Service":
				m.services = append(m.services, corev1.Service{})
				obj = &m.services[len(m.services)-1]
			case "apps/v1 StatefulSet":
				m.statefulSets = append(m.statefulSets, appsv1.StatefulSet{})
				obj = &m.statefulSets[len(m.statefulSets)-1]
			case "apps/v1 DaemonSet":
				m.daemonSets = append(m.daemonSets, appsv1.DaemonSet{})
				obj = &m.daemonSets[len(m.daemonSets)-1]
			case "v1 ConfigMap":
				m.configMaps = append(m.configMaps, corev1.ConfigMap{})
				obj = &m.configMaps[len(m.configMaps)-1]
			case "policy/v1 PodDisruptionBudget":
				m.pdbs = append(m.pdbs, policyv1.PodDisruptionBudget{})
				obj = &m.pdbs[len(m.pdbs)-1]
			default:
				t.Fatalf("%s document %d: unexpected %s %s", f, i, tm.APIVersion, tm.Kind)
			}
			dec := json.NewDecoder(bytes.NewReader(js))
			dec.DisallowUnknownFields() // strict: a misspelt field fails
			if err := dec.Decode(obj); err != nil {
				t.Errorf("%s document %d (%s): %v", f, i, tm.Kind, err)
			}
		}
	}
	return m
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	return env
}

// The collector's own variables: every PROGRESS_* or TNCO_* name that the
// shipped configuration files or run.sh read.
func knownVariables(t *testing.T) map[string]bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(collectorConfig, "*.yaml"))
	files = append(files, filepath.Join(collectorConfig, "run.sh"))
	known := map[string]bool{}
	re := regexp.MustCompile(`\b(PROGRESS|TNCO)_[A-Z0-9_]+`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range re.FindAll(b, -1) {
			known[string(v)] = true
		}
	}
	return known
}

// Margin of RSS over PROGRESS_MEMORY_LIMIT_MIB that docs/collector.md
// states ("Memory under large requests"), measured in make test-scale.
const memoryMarginMiB = 192

// checkCollectorPod checks what both tiers' pods need: a known tier, only
// variables the collector reads, probes on the health_check endpoint, a
// memory limit above the collector's own plus the margin, the queue
// directory on a volume, and a grace period above the shutdown bound.
func checkCollectorPod(t *testing.T, name string, spec corev1.PodSpec, tier string, known map[string]bool) map[string]corev1.EnvVar {
	t.Helper()
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", name, len(spec.Containers))
	}
	c := spec.Containers[0]
	env := envOf(c)
	if env["PROGRESS_TIER"].Value != tier {
		t.Errorf("%s: PROGRESS_TIER %q, want %q", name, env["PROGRESS_TIER"].Value, tier)
	}
	for v := range env {
		if !known[v] {
			t.Errorf("%s: %s is read by no shipped config file nor run.sh", name, v)
		}
	}
	_, healthPort, err := net.SplitHostPort(env["PROGRESS_HEALTH_ENDPOINT"].Value)
	if err != nil {
		t.Fatalf("%s: PROGRESS_HEALTH_ENDPOINT: %v", name, err)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if fmt.Sprint(ports["health"]) != healthPort {
		t.Errorf("%s: containerPort health %d, but the health_check extension listens on %s", name, ports["health"], healthPort)
	}
	for pname, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.String() != "health" {
			t.Errorf("%s: %s probe is not an HTTP GET on the health port: %+v", name, pname, p)
		}
	}
	limit, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		t.Fatalf("%s: no memory limit", name)
	}
	want := resource.MustParse(env["PROGRESS_MEMORY_LIMIT_MIB"].Value + "Mi")
	want.Add(resource.MustParse(fmt.Sprint(memoryMarginMiB) + "Mi"))
	if limit.Cmp(want) < 0 {
		t.Errorf("%s: memory limit %s below PROGRESS_MEMORY_LIMIT_MIB plus the %d MiB margin (%s)", name, limit.String(), memoryMarginMiB, want.String())
	}
	mounted := false
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == env["PROGRESS_STORAGE_DIR"].Value {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("%s: the queue directory %q is on no volume", name, env["PROGRESS_STORAGE_DIR"].Value)
	}
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds <= 8 {
		t.Errorf("%s: grace period %v, want above the collector's 8 s shutdown bound", name, spec.TerminationGracePeriodSeconds)
	}
	return env
}

func TestCollectorManifests(t *testing.T) {
	m := decodeManifests(t)
	known := knownVariables(t)
	if len(m.statefulSets) != 1 || len(m.daemonSets) != 1 {
		t.Fatalf("%d StatefulSets and %d DaemonSets, want one gateway and one agent", len(m.statefulSets), len(m.daemonSets))
	}
	gw, ag := m.statefulSets[0], m.daemonSets[0]

	// The gateways: a StatefulSet whose headless Service selects its pods,
	// each with a volume of its own for the persistent queue.
	checkCollectorPod(t, "gateway", gw.Spec.Template.Spec, "gateway", known)
	var headless *corev1.Service
	for i, s := range m.services {
		if s.Name == gw.Spec.ServiceName {
			headless = &m.services[i]
		}
	}
	if headless == nil || headless.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Fatalf("the gateways' serviceName %q is not a headless Service (the agents' DNS resolver needs one address per gateway)", gw.Spec.ServiceName)
	}
	if !labels.SelectorFromSet(headless.Spec.Selector).Matches(labels.Set(gw.Spec.Template.Labels)) {
		t.Errorf("the headless Service does not select the gateway pods")
	}
	if len(gw.Spec.VolumeClaimTemplates) != 1 || gw.Spec.Template.Spec.Containers[0].VolumeMounts[0].Name != gw.Spec.VolumeClaimTemplates[0].Name {
		t.Errorf("the gateways' queue is not on a volume claim of their own")
	}
	if gw.Spec.Replicas == nil || *gw.Spec.Replicas < 2 {
		t.Errorf("gateway replicas %v, want at least 2", gw.Spec.Replicas)
	}
	env := envOf(gw.Spec.Template.Spec.Containers[0])
	if ref := env["PROGRESS_TENANTS"].ValueFrom; ref != nil && ref.ConfigMapKeyRef != nil {
		found := false
		for _, cm := range m.configMaps {
			if cm.Name == ref.ConfigMapKeyRef.Name && cm.Data[ref.ConfigMapKeyRef.Key] != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("PROGRESS_TENANTS refers to %s/%s, which is in no ConfigMap here", ref.ConfigMapKeyRef.Name, ref.ConfigMapKeyRef.Key)
		}
	}
	grpcPort := false
	for _, p := range headless.Spec.Ports {
		if p.Port == 4317 {
			grpcPort = true
		}
	}
	if !grpcPort {
		t.Errorf("the headless Service has no port 4317 (PROGRESS_GATEWAYS_PORT)")
	}

	// The agents: a DaemonSet that finds the gateways by the headless
	// Service's DNS name, with its queue on the node.
	aenv := checkCollectorPod(t, "agent", ag.Spec.Template.Spec, "agent", known)
	wantDNS := headless.Name + "." + headless.Namespace + ".svc.cluster.local"
	if aenv["PROGRESS_GATEWAYS_DNS"].Value != wantDNS {
		t.Errorf("agent PROGRESS_GATEWAYS_DNS %q, want the headless Service %q", aenv["PROGRESS_GATEWAYS_DNS"].Value, wantDNS)
	}
	if len(m.pdbs) == 0 || !bytes.Contains([]byte(m.pdbs[0].Spec.Selector.String()), []byte("gateway")) {
		t.Errorf("no PodDisruptionBudget for the gateways")
	}
}
