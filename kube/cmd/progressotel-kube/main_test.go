package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/progressotel/progressotel/kube/internal/kubetest"
)

func TestMain(m *testing.M) { kubetest.Main(m) }

// The exit status says ready, failed or timed out, against the real API
// server through a kubeconfig, as a driver in another language runs it.
func TestExitStatus(t *testing.T) {
	env := kubetest.Start(t)
	t.Setenv("OTEL_LOGS_EXPORTER", "none")
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	dir := t.TempDir()
	kc, err := kubetest.KubeConfig(env.Admin, dir)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(env.Admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("cli-%d", time.Now().UnixNano()%100000)
	if err := admin.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	write := func(name, yaml string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(yaml, "{{ns}}", ns)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ready := write("ready.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: '{{ns}}'}\ndata: {k: v}\n")
	invalid := write("invalid.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Name, namespace: '{{ns}}'}\n")
	never := write("never.yaml", "apiVersion: compute.unikorn-cloud.org/v1alpha1\nkind: ComputeCluster\nmetadata: {name: c, namespace: '{{ns}}'}\nspec: {}\n")

	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"ready", []string{"apply", "-f", ready}, exitReady},
		{"again, unchanged", []string{"apply", "-f", ready}, exitReady},
		{"refused", []string{"apply", "-f", invalid}, exitFailed},
		{"timed out", []string{"apply", "-f", never, "--timeout", "2s"}, exitTimeout},
		{"deleted", []string{"delete", "-f", ready}, exitReady},
		{"no file", []string{"apply"}, exitUsage},
		{"unreadable file", []string{"apply", "-f", filepath.Join(dir, "missing.yaml")}, exitUsage},
		{"no verb", []string{"-f", ready}, exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			args := append(tc.args, "--kubeconfig", kc)
			if tc.name == "no verb" {
				args = tc.args
			}
			if got := run(context.Background(), args, strings.NewReader(""), &stderr); got != tc.want {
				t.Errorf("exit %d, want %d\n%s", got, tc.want, stderr.String())
			}
		})
	}
}
