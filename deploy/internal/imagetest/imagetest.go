// Package imagetest runs the image that make image builds, for the deploy
// module's tests: unpacked by umoci (Debian) into an OCI runtime bundle and
// its entrypoint started from the unpacked root as a runtime would start
// it (chroot, the image's user, working directory and environment), with a
// Kafka-protocol broker (kfake) in the test process.
package imagetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// RepoRoot is the repository around the deploy module.
func RepoRoot() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "deploy", "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Need skips, or fails under CI=true, where a missing real tool is a failure.
func Need(t testing.TB, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why + " (CI=true, so this fails)")
	}
	t.Skip(why)
}

// Archive is the archive of make image: PROGRESS_IMAGE_ARCHIVE, else the
// one in bin/.
func Archive(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("PROGRESS_IMAGE_ARCHIVE"); p != "" {
		return p
	}
	m, _ := filepath.Glob(filepath.Join(RepoRoot(), "bin", "otelcol-progress-*.oci.tar"))
	Need(t, len(m) == 1, "no image archive in bin/: run make image")
	return m[0]
}

// Bundle is the image unpacked by umoci.
type Bundle struct {
	Rootfs  string
	Ref     string // the archive's reference name, otelcol-progress:<tag>
	Tag     string
	Process struct {
		User struct{ UID, GID uint32 } `json:"user"`
		Args []string                  `json:"args"`
		Env  []string                  `json:"env"`
		Cwd  string                    `json:"cwd"`
	}
}

// Unpack untars the archive and unpacks its one image with umoci.
func Unpack(t testing.TB) *Bundle {
	t.Helper()
	_, err := exec.LookPath("umoci")
	Need(t, err == nil, "umoci is not installed (scripts/install-tools.sh installs it)")
	Need(t, os.Geteuid() == 0, "unpacking with the layer's owners and running as the image's user need root")
	dir := t.TempDir()
	lay := filepath.Join(dir, "layout")
	if err := os.Mkdir(lay, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xf", Archive(t), "-C", lay).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	var index struct {
		Manifests []struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	b, err := os.ReadFile(filepath.Join(lay, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: want one image (%v): %s", err, b)
	}
	bu := &Bundle{Ref: index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]}
	name, tag, ok := strings.Cut(bu.Ref, ":")
	if !ok || name != "otelcol-progress" {
		t.Fatalf("the archive's reference name is %q, want otelcol-progress:<tag> (podman load names the image by it)", bu.Ref)
	}
	bu.Tag = tag
	out := filepath.Join(dir, "bundle")
	if o, err := exec.Command("umoci", "unpack", "--image", lay+":"+bu.Ref, out).CombinedOutput(); err != nil {
		t.Fatalf("umoci unpack: %v: %s", err, o)
	}
	bu.Rootfs = filepath.Join(out, "rootfs")
	var spec struct {
		Process json.RawMessage `json:"process"`
	}
	if b, err = os.ReadFile(filepath.Join(out, "config.json")); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(spec.Process, &bu.Process); err != nil {
		t.Fatal(err)
	}
	return bu
}

// FreePort is a port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Broker starts a one-broker kfake cluster that creates topics on demand
// and returns its address.
func Broker(t testing.TB) string {
	t.Helper()
	port := FreePort(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return "127.0.0.1:" + strconv.Itoa(port)
}

// Output is a process's output, written by its pipes.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Output) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Output) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Collector is the image's entrypoint running.
type Collector struct {
	HTTP   string // the OTLP/HTTP address
	Out    *Output
	cmd    *exec.Cmd
	exited chan error
}

// Start runs the entrypoint from the unpacked root with the image's
// environment and env on top, as the image's user with the extra groups
// (a pod's fsGroup), and returns once the collector is ready; err is
// set when it exited instead. It is stopped (SIGTERM) when t ends.
func (bu *Bundle) Start(t testing.TB, env []string, groups ...uint32) (*Collector, error) {
	t.Helper()
	return bu.StartArgs(t, env, nil, groups...)
}

// StartArgs is Start with args after the entrypoint, as a pod's container
// args.
func (bu *Bundle) StartArgs(t testing.TB, env, args []string, groups ...uint32) (*Collector, error) {
	t.Helper()
	c := &Collector{HTTP: "127.0.0.1:" + strconv.Itoa(FreePort(t)), Out: &Output{}, exited: make(chan error, 1)}
	full := append(append([]string(nil), bu.Process.Env...),
		"PROGRESS_OTLP_HTTP_ENDPOINT="+c.HTTP,
		"PROGRESS_OTLP_GRPC_ENDPOINT=127.0.0.1:"+strconv.Itoa(FreePort(t)),
		"PROGRESS_HEALTH_ENDPOINT=127.0.0.1:"+strconv.Itoa(FreePort(t)),
		"PROGRESS_METRICS_PORT="+strconv.Itoa(FreePort(t)),
		"PROGRESS_RETRY_MAX_INTERVAL=1s",
	)
	full = append(full, env...)
	if groups == nil {
		groups = []uint32{}
	}
	c.cmd = &exec.Cmd{
		Path: bu.Process.Args[0], // inside the root
		Args: append(append([]string(nil), bu.Process.Args...), args...),
		Env:  full,
		Dir:  bu.Process.Cwd,
		SysProcAttr: &syscall.SysProcAttr{
			Chroot:     bu.Rootfs,
			Credential: &syscall.Credential{Uid: bu.Process.User.UID, Gid: bu.Process.User.GID, Groups: groups},
			Pdeathsig:  syscall.SIGKILL,
		},
		Stdout: c.Out,
		Stderr: c.Out,
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() { c.Stop(t) })
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(c.Out.String(), "Everything is ready") {
		select {
		case err := <-c.exited:
			c.exited <- err
			return c, fmt.Errorf("the collector exited (%v):\n%s", err, c.Out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector is not ready:\n%s", c.Out.String())
		}
	}
	return c, nil
}

// Stop sends SIGTERM and waits; a collector that does not stop cleanly
// fails t.
func (c *Collector) Stop(t testing.TB) {
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.exited:
		c.exited <- err
		if err != nil && !strings.Contains(c.Out.String(), "Everything is ready") {
			return // it never started; the test has said why
		}
		if err != nil {
			t.Errorf("the collector did not stop cleanly on SIGTERM: %v\n%s", err, c.Out.String())
		}
	case <-time.After(60 * time.Second):
		_ = c.cmd.Process.Kill()
		t.Errorf("the collector did not stop within 60s of SIGTERM")
	}
}

// Progressotel builds the progressotel command into a temporary directory.
func Progressotel(t testing.TB) string {
	t.Helper()
	po := filepath.Join(t.TempDir(), "progressotel")
	build := exec.Command("go", "build", "-o", po, "./cmd/progressotel")
	build.Dir = RepoRoot()
	if o, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building progressotel: %v: %s", err, o)
	}
	return po
}
