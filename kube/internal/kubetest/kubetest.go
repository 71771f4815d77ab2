// Package kubetest runs a real API server for the kube module's tests and
// its demo: kube-apiserver and etcd built by scripts/build-kube.sh into the
// repo's bin/ (or KUBEBUILDER_ASSETS), started once per test binary by
// controller-runtime's envtest, with the test CRDs installed and a second
// user authenticated by a client certificate of envtest's CA.
//
// Without the binaries the tests that need them skip, and fail under
// CI=true, where a missing real tool is a failure.
package kubetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// UserAlice is the second user, who has no permission but those a test
// grants her.
const UserAlice = "alice"

// Env is a running API server.
type Env struct {
	// Admin is a config for a cluster admin.
	Admin *rest.Config
	// Alice is a config for UserAlice.
	Alice *rest.Config
}

var (
	once    sync.Once
	shared  *Env
	stopEnv func() error
	errEnv  error
)

// Start returns the test binary's API server, starting it on first use. Without
// the binaries it skips t, or fails it under CI=true.
func Start(t testing.TB) *Env {
	t.Helper()
	once.Do(func() { shared, stopEnv, errEnv = StartServer() })
	if errEnv != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no API server (CI=true, so this fails): %v", errEnv)
		}
		t.Skipf("no API server: %v", errEnv)
	}
	return shared
}

// Main runs the tests and stops the API server if one was started.
func Main(m *testing.M) {
	code := m.Run()
	if stopEnv != nil {
		if err := stopEnv(); err != nil {
			fmt.Fprintln(os.Stderr, "kubetest: stopping the API server:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// AssetsDir is where kube-apiserver and etcd are: KUBEBUILDER_ASSETS, else
// the bin/ of the repository around the working directory.
func AssetsDir() (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "build-kube.sh")); err == nil {
			return filepath.Join(dir, "bin"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no repository root (scripts/build-kube.sh) above the working directory")
		}
		dir = parent
	}
}

// StartServer starts an API server of its own (Start's, or the demo's);
// stop stops it.
func StartServer() (*Env, func() error, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, nil, err
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return nil, nil, fmt.Errorf("%s is not in %s: run make kube-bins", b, dir)
		}
	}
	_, self, _, _ := runtime.Caller(0)
	crds := envtest.CRDInstallOptions{Paths: []string{filepath.Join(filepath.Dir(self), "crds")}, ErrorIfPathMissing: true}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    dir,
		CRDInstallOptions:        crds,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", dir, err)
	}
	alice, err := env.AddUser(envtest.User{Name: UserAlice}, cfg)
	if err != nil {
		_ = env.Stop()
		return nil, nil, err
	}
	return &Env{Admin: cfg, Alice: alice.Config()}, env.Stop, nil
}

// KubeConfig writes a kubeconfig file for cfg (a config of this package)
// into dir and returns its path, for programs that read one.
func KubeConfig(cfg *rest.Config, dir string) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "user"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}
