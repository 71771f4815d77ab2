package charttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// podSpecs returns each workload's pod template, by kind.
func podSpecs(t *testing.T, args ...string) map[string]corev1.PodSpec {
	t.Helper()
	specs := map[string]corev1.PodSpec{}
	for _, o := range mustRender(t, "progress", "progress", args...) {
		switch o.GetKind() {
		case "StatefulSet":
			var s appsv1.StatefulSet
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &s); err != nil {
				t.Fatal(err)
			}
			specs["StatefulSet"] = s.Spec.Template.Spec
		case "DaemonSet":
			var d appsv1.DaemonSet
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				t.Fatal(err)
			}
			specs["DaemonSet"] = d.Spec.Template.Spec
		}
	}
	return specs
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// The collectors' queues are writable by the image's user (uid and gid
// 10001) without an init container and without root: an emptyDir, which
// the kubelet gives to the pod's fsGroup, or a hostPath that must already
// exist (type Directory): never DirectoryOrCreate, whose directory the
// kubelet makes for root. The image test runs the collector on a directory
// as fsGroup leaves it and as the kubelet creates a hostPath.
func TestQueueIsWritable(t *testing.T) {
	for _, values := range [][]string{{"-f", allValues}, {"-f", allValues, "--set", "agent.queue.type=emptyDir"}} {
		for kind, spec := range podSpecs(t, values...) {
			sc := spec.SecurityContext
			if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 10001 ||
				sc.FSGroup == nil || *sc.FSGroup != 10001 {
				t.Errorf("%s: pod securityContext %+v, want non-root uid 10001 with fsGroup 10001", kind, sc)
			}
			if len(spec.InitContainers) > 0 {
				t.Errorf("%s: init containers %v", kind, spec.InitContainers)
			}
			c := spec.Containers[0]
			dir := env(c, "PROGRESS_STORAGE_DIR")
			if dir == nil {
				t.Fatalf("%s: no PROGRESS_STORAGE_DIR", kind)
			}
			var vol string
			for _, m := range c.VolumeMounts {
				if m.MountPath == dir.Value {
					vol = m.Name
				}
			}
			if vol == "" {
				t.Errorf("%s: nothing mounted at the queue directory %s", kind, dir.Value)
				continue
			}
			if kind == "StatefulSet" {
				continue // a PersistentVolumeClaim: fsGroup applies
			}
			for _, v := range spec.Volumes {
				if v.Name != vol {
					continue
				}
				switch {
				case v.EmptyDir != nil:
				case v.HostPath != nil && v.HostPath.Type != nil && *v.HostPath.Type == corev1.HostPathDirectory:
				default:
					t.Errorf("%s: queue volume %+v: want an emptyDir or a hostPath of type Directory", kind, v.VolumeSource)
				}
			}
		}
	}
}

// The OTLP token and TLS are the front tier's, from Secrets; in two tiers
// the gateways require gatewayAuth's token of the agents, which present it
// over TLS, checking the gateways' certificate for their Service's name
// (TestChartTiersTokenRuns runs the two). Kafka's SASL and TLS and every
// token come from Secrets, never from plain values.
func TestSecretsFromSecrets(t *testing.T) {
	specs := podSpecs(t, "-f", allValues)
	agent, gateway := specs["DaemonSet"].Containers[0], specs["StatefulSet"].Containers[0]
	fromSecret := func(c corev1.Container, name, secret string) {
		t.Helper()
		if e := env(c, name); e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != secret {
			t.Errorf("%s: %s is %+v, want from Secret %s", c.Name, name, e, secret)
		}
	}
	fromSecret(agent, "PROGRESS_OTLP_BEARER_TOKEN", "progress-otlp-token")
	if e := env(agent, "PROGRESS_OTLP_TLS_CERT_FILE"); e == nil {
		t.Errorf("agent: no OTLP TLS")
	}
	fromSecret(agent, "PROGRESS_GATEWAY_BEARER_TOKEN", "progress-gateway-token")
	fromSecret(gateway, "PROGRESS_OTLP_BEARER_TOKEN", "progress-gateway-token")
	if e := env(agent, "PROGRESS_GATEWAY_TLS_INSECURE"); e == nil || e.Value != "false" {
		t.Errorf("agent: PROGRESS_GATEWAY_TLS_INSECURE %+v, want false (the token goes over TLS only)", e)
	}
	if e := env(gateway, "PROGRESS_OTLP_TLS_CERT_FILE"); e == nil || !strings.HasPrefix(e.Value, "/etc/otelcol-progress-secrets/gateway-tls/") {
		t.Errorf("gateway behind agents: OTLP TLS %+v, want gatewayAuth's certificate", e)
	}
	if want := "server_name_override: progress-gateway.progress.svc.cluster.local"; len(agent.Args) != 2 || !strings.HasSuffix(agent.Args[1], want) {
		t.Errorf("agent args %q, want a --config checking the gateways' certificate for their Service (%s)", agent.Args, want)
	} else {
		// The argument names the agent's exporter by its id in agent.yaml: a
		// renamed exporter would leave it setting one that no pipeline uses.
		id, _, _ := strings.Cut(strings.TrimPrefix(agent.Args[1], "yaml:exporters::"), "::")
		conf, err := os.ReadFile(filepath.Join(repoRoot, "collector-config", "agent.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(conf), "\n  "+id+":\n") || !strings.Contains(string(conf), "exporters: ["+id+"]") {
			t.Errorf("agent args %q: exporter %q is not the exporter of collector-config/agent.yaml's pipeline", agent.Args, id)
		}
	}
	// Without gatewayAuth the gateways behind agents take no token.
	plain := podSpecs(t, "-f", allValues, "--set", "gatewayAuth.token.secretName=", "--set", "gatewayAuth.tls.secretName=")
	if e := env(plain["StatefulSet"].Containers[0], "PROGRESS_OTLP_BEARER_TOKEN"); e != nil {
		t.Errorf("gateway behind agents without gatewayAuth has a token: %+v", e)
	}
	if a := plain["DaemonSet"].Containers[0]; env(a, "PROGRESS_GATEWAY_BEARER_TOKEN") != nil || env(a, "PROGRESS_GATEWAY_TLS_INSECURE") != nil || a.Args != nil {
		t.Errorf("agent without gatewayAuth: %+v %q", a.Env, a.Args)
	}
	if e := env(gateway, "TNCO_KAFKA_SASL"); e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "tnco-kafka-sasl" {
		t.Errorf("gateway SASL: %+v, want from Secret tnco-kafka-sasl", e)
	}
	if e := env(gateway, "TNCO_KAFKA_TLS_INSECURE"); e == nil || e.Value != "false" {
		t.Errorf("gateway Kafka TLS: %+v", e)
	}
	for _, c := range []corev1.Container{agent, gateway} {
		for _, e := range c.Env {
			if e.Value != "" && (e.Name == "TNCO_KAFKA_SASL" || strings.HasSuffix(e.Name, "_BEARER_TOKEN")) {
				t.Errorf("%s: %s is a plain value", c.Name, e.Name)
			}
		}
	}
	gw := podSpecs(t, "--set", "tier=gateway", "--set", "tenants={a}", "--set", "kafka.brokers={k:9092}", "--set", "otlp.token.secretName=tok")["StatefulSet"].Containers[0]
	if e := env(gw, "PROGRESS_OTLP_BEARER_TOKEN"); e == nil || e.ValueFrom == nil {
		t.Errorf("tier gateway: the gateways face the drivers and take no token")
	}
	if e := env(gw, "PROGRESS_TIER"); e == nil || e.Value != "single" {
		t.Errorf("tier gateway: PROGRESS_TIER %+v, want single (no agent in front)", e)
	}
}
