// Package kubeapi runs a real API server for the deploy module's tests:
// kube-apiserver and etcd from the repository's bin/ (scripts/build-kube.sh,
// as the kube module's tests run them) under controller-runtime's envtest,
// with the Prometheus Operator's published CRDs for ServiceMonitor and
// PrometheusRule, read from its Go module.
package kubeapi

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/progressotel/progressotel/deploy/internal/imagetest"
)

// PrometheusOperatorVersion is the release whose CRDs are installed (its
// module zip holds example/prometheus-operator-crd/).
const PrometheusOperatorVersion = "v0.85.0"

var (
	once sync.Once
	cfg  *rest.Config
	err  error
	stop func() error
)

// Start returns the test binary's API server, starting it on first use;
// without the binaries it skips t, or fails it under CI=true.
func Start(t testing.TB) *rest.Config {
	t.Helper()
	once.Do(func() { cfg, stop, err = start() })
	imagetest.Need(t, err == nil, fmt.Sprintf("no API server: %v", err))
	return cfg
}

// Main runs the tests and stops the API server if one was started.
func Main(m *testing.M) {
	code := m.Run()
	if stop != nil {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, "kubeapi: stopping the API server:", err)
		}
	}
	os.Exit(code)
}

// CRDDir is the Prometheus Operator's published CRDs in its Go module.
func CRDDir() (string, error) {
	tmp, err := os.MkdirTemp("", "kubeapi-crds-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/prometheus-operator/prometheus-operator@"+PrometheusOperatorVersion)
	cmd.Dir = tmp // outside any module: the deploy module is not touched
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download prometheus-operator: %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download gave no directory: %v: %s", err, out)
	}
	return filepath.Join(mod.Dir, "example", "prometheus-operator-crd"), nil
}

func start() (*rest.Config, func() error, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(imagetest.RepoRoot(), "bin")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, b)); err != nil {
			return nil, nil, fmt.Errorf("%s is not in %s: run make kube-bins", b, assets)
		}
	}
	dir, err := CRDDir()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions: envtest.CRDInstallOptions{ErrorIfPathMissing: true, Paths: []string{
			filepath.Join(dir, "monitoring.coreos.com_servicemonitors.yaml"),
			filepath.Join(dir, "monitoring.coreos.com_prometheusrules.yaml"),
		}},
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	c, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	return c, env.Stop, nil
}

// KubeConfig writes a kubeconfig for c into dir and returns its path.
func KubeConfig(c *rest.Config, dir string) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}
