// Package kubetest runs a real API server for the kube module's tests and
// its demo:
// kube-apiserver and etcd built by scripts/build-kube.sh into the repo's
// bin/ (or KUBEBUILDER_ASSETS), started once per test binary by
// controller-runtime's envtest, with the test CRDs installed and users
// authenticated by a static token file.
//
// Without the binaries the tests that need them skip, and fail under
// CI=true, where a missing real tool is a failure.
package kubetest

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

//go:embed crds/*.yaml
var crdFiles embed.FS

// The users of the token file: the admin (system:masters, the identity
// envtest provisions for itself under both names) and Alice, who has no
// permission but those a test grants her.
const (
	UserAlice = "alice"
)

// Env is a running API server.
type Env struct {
	// Admin is a config for a cluster admin.
	Admin *rest.Config
	// Alice is a config for the user "alice", authenticated by a token.
	Alice *rest.Config
}

var (
	once    sync.Once
	shared  *Env
	testEnv *envtest.Environment
	errEnv  error
)

// Start returns the test binary's API server, starting it on first use. Without
// the binaries it skips t, or fails it under CI=true.
func Start(t testing.TB) *Env {
	t.Helper()
	once.Do(func() { shared, testEnv, errEnv = start() })
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
	if testEnv != nil {
		if err := testEnv.Stop(); err != nil {
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

// StartServer starts an API server of its own, outside a test (the
// demo); stop stops it.
func StartServer() (env *Env, stop func() error, err error) {
	env, e, err := start()
	if err != nil {
		return nil, nil, err
	}
	return env, e.Stop, nil
}

func start() (*Env, *envtest.Environment, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, nil, err
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return nil, nil, fmt.Errorf("%s is not in %s: run make kube-bins", b, dir)
		}
	}
	crds, err := readCRDs()
	if err != nil {
		return nil, nil, err
	}
	authn := &TokenAuthn{Users: []envtest.User{
		{Name: "admin", Groups: []string{"system:masters"}},
		{Name: "default", Groups: []string{"system:masters"}},
		{Name: UserAlice},
	}}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    dir,
		CRDInstallOptions:        envtest.CRDInstallOptions{CRDs: crds},
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	env.ControlPlane.GetAPIServer().SecureServing.Authn = authn
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", dir, err)
	}
	alice, err := authn.AddUser(envtest.User{Name: UserAlice}, cfg)
	if err != nil {
		_ = env.Stop()
		return nil, nil, err
	}
	return &Env{Admin: cfg, Alice: alice}, env, nil
}

func readCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := crdFiles.ReadDir("crds")
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		b, err := crdFiles.ReadFile("crds/" + e.Name())
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// TokenAuthn is an envtest authenticator by the API server's static token
// file (--token-auth-file). The file is read once, when the API server
// starts, so every user is declared beforehand in Users; AddUser of
// another name fails.
type TokenAuthn struct {
	Users []envtest.User

	file string
}

// Configure points the API server at the token file in workDir.
func (a *TokenAuthn) Configure(workDir string, args *envtest.Arguments) error {
	a.file = filepath.Join(workDir, "tokens.csv")
	args.Set("token-auth-file", a.file)
	return nil
}

// Start writes the token file: token,user,uid,"group1,group2".
func (a *TokenAuthn) Start() error {
	if a.file == "" {
		return errors.New("kubetest: Start before Configure")
	}
	var b strings.Builder
	for _, u := range a.Users {
		fmt.Fprintf(&b, "%s,%s,uid-%s,%q\n", token(u.Name), u.Name, u.Name, strings.Join(u.Groups, ","))
	}
	return os.WriteFile(a.file, []byte(b.String()), 0o600)
}

// AddUser returns baseCfg with the bearer token of a declared user.
func (a *TokenAuthn) AddUser(user envtest.User, baseCfg *rest.Config) (*rest.Config, error) {
	for _, u := range a.Users {
		if u.Name == user.Name {
			cfg := rest.CopyConfig(baseCfg)
			cfg.BearerToken = token(u.Name)
			return cfg, nil
		}
	}
	return nil, fmt.Errorf("kubetest: user %q is not in the token file (declare it in TokenAuthn.Users)", user.Name)
}

// Stop does nothing: envtest removes its working directory.
func (a *TokenAuthn) Stop() error { return nil }

// token is a user's token: fixed, since the API server is a test's own.
func token(user string) string { return "kubetest-token-" + user }

// KubeConfig writes a kubeconfig file for cfg (a bearer-token config of
// this package) into dir and returns its path, for programs that read one.
func KubeConfig(cfg *rest.Config, dir string) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "user"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}
