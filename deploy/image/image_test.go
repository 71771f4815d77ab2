package main

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

var repoRoot, _ = filepath.Abs(filepath.Join("..", ".."))

// need skips, or fails under CI=true, where a missing real tool is a failure.
func need(t *testing.T, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why + " (CI=true, so this fails)")
	}
	t.Skip(why)
}

// archivePath is the archive of make image: PROGRESS_IMAGE_ARCHIVE, else
// the one in bin/.
func archivePath(t *testing.T) string {
	if p := os.Getenv("PROGRESS_IMAGE_ARCHIVE"); p != "" {
		return p
	}
	m, _ := filepath.Glob(filepath.Join(repoRoot, "bin", "otelcol-progress-*.oci.tar"))
	need(t, len(m) == 1, "no image archive in bin/: run make image")
	return m[0]
}

// bundle is the image unpacked by umoci into an OCI runtime bundle.
type bundle struct {
	rootfs  string
	version string // the tag
	process struct {
		User struct{ UID, GID uint32 } `json:"user"`
		Args []string                  `json:"args"`
		Env  []string                  `json:"env"`
		Cwd  string                    `json:"cwd"`
	}
}

// unpack untars the archive and unpacks its one image with umoci, as a
// runtime would: rootfs with the layer's owners, config.json from the
// image's config.
func unpack(t *testing.T) *bundle {
	_, err := exec.LookPath("umoci")
	need(t, err == nil, "umoci is not installed (scripts/install-tools.sh installs it)")
	need(t, os.Geteuid() == 0, "unpacking with the layer's owners and running as the image's user need root")
	dir := t.TempDir()
	lay := filepath.Join(dir, "layout")
	if err := os.Mkdir(lay, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xf", archivePath(t), "-C", lay).CombinedOutput(); err != nil {
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
	bu := &bundle{version: index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]}
	out := filepath.Join(dir, "bundle")
	if o, err := exec.Command("umoci", "unpack", "--image", lay+":"+bu.version, out).CombinedOutput(); err != nil {
		t.Fatalf("umoci unpack: %v: %s", err, o)
	}
	bu.rootfs = filepath.Join(out, "rootfs")
	var spec struct {
		Process json.RawMessage `json:"process"`
	}
	b, err = os.ReadFile(filepath.Join(out, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(spec.Process, &bu.process); err != nil {
		t.Fatal(err)
	}
	return bu
}

// The image is what a platform team expects: tagged with the distribution's
// version, labelled, not root, no shell, and its state directory owned by its
// user.
func TestImageShape(t *testing.T) {
	bu := unpack(t)
	want, err := os.ReadFile(filepath.Join(repoRoot, "collector-config", "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if bu.version == "" || !bytes.Contains(want, []byte("  version: "+bu.version+"\n")) {
		t.Errorf("tag %q is not the distribution's version (builder-config.yaml)", bu.version)
	}
	if bu.process.User.UID == 0 || bu.process.User.GID == 0 {
		t.Errorf("the image runs as %d:%d, want a non-root user", bu.process.User.UID, bu.process.User.GID)
	}
	if len(bu.process.Args) != 1 || bu.process.Args[0] != "/entrypoint" {
		t.Errorf("entrypoint %q, want [/entrypoint]", bu.process.Args)
	}
	for _, sh := range []string{"bin/sh", "usr/bin/sh", "bin/busybox"} {
		if _, err := os.Stat(filepath.Join(bu.rootfs, sh)); err == nil {
			t.Errorf("the image has a shell: /%s", sh)
		}
	}
	fi, err := os.Stat(filepath.Join(bu.rootfs, "var/lib/otelcol-progress"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != bu.process.User.UID {
		t.Errorf("/var/lib/otelcol-progress belongs to uid %d, want the image's user %d", st.Uid, bu.process.User.UID)
	}
	for _, c := range []string{"progress.yaml", "gateway.yaml", "agent.yaml", "agent-dns.yaml", "auth.yaml", "tls.yaml"} {
		if _, err := os.Stat(filepath.Join(bu.rootfs, "etc/otelcol-progress", c)); err != nil {
			t.Errorf("config %s missing: %v", c, err)
		}
	}

	// The labels, read through go-containerregistry.
	lay := t.TempDir()
	if out, err := exec.Command("tar", "-xf", archivePath(t), "-C", lay).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	idx, err := layout.ImageIndexFromPath(lay)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"title", "description", "version", "created", "revision", "licenses"} {
		if cf.Config.Labels["org.opencontainers.image."+l] == "" {
			t.Errorf("label org.opencontainers.image.%s missing: %v", l, cf.Config.Labels)
		}
	}
	if v := cf.Config.Labels["org.opencontainers.image.version"]; v != bu.version {
		t.Errorf("version label %q, tag %q", v, bu.version)
	}
	size, err := os.Stat(archivePath(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s: archive %.1f MiB", bu.version, float64(size.Size())/(1<<20))
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer is the collector's output, written by its pipes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The image's entrypoint, run from the unpacked root as the image's user
// (chroot, the image's uid, gid, working directory and environment, no
// shell anywhere), takes PROGRESS_TENANTS, writes its overlay into its
// own state directory, and the collector routes each tenant's records to
// that tenant's topic on a Kafka-protocol broker (kfake).
func TestImageRoutesTenants(t *testing.T) {
	bu := unpack(t)
	port := freePort(t)
	broker, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	brokerAddr := "127.0.0.1:" + strconv.Itoa(port)

	httpAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	env := append([]string(nil), bu.process.Env...)
	env = append(env,
		"PROGRESS_TENANTS=tenant-a tenant-b",
		"TNCO_KAFKA_BROKERS="+brokerAddr,
		"PROGRESS_OTLP_HTTP_ENDPOINT="+httpAddr,
		"PROGRESS_OTLP_GRPC_ENDPOINT=127.0.0.1:"+strconv.Itoa(freePort(t)),
		"PROGRESS_HEALTH_ENDPOINT=127.0.0.1:"+strconv.Itoa(freePort(t)),
		"PROGRESS_METRICS_PORT="+strconv.Itoa(freePort(t)),
		"PROGRESS_RETRY_MAX_INTERVAL=1s",
	)
	out := &syncBuffer{}
	cmd := &exec.Cmd{
		Path: bu.process.Args[0], // inside the root
		Args: bu.process.Args,
		Env:  env,
		Dir:  bu.process.Cwd,
		SysProcAttr: &syscall.SysProcAttr{
			Chroot:     bu.rootfs,
			Credential: &syscall.Credential{Uid: bu.process.User.UID, Gid: bu.process.User.GID, Groups: []uint32{}},
			Pdeathsig:  syscall.SIGKILL,
		},
		Stdout: out,
		Stderr: out,
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the collector did not stop cleanly on SIGTERM: %v", err)
			}
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("the collector did not stop within 60s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("collector output:\n%s", out.String())
		}
	}()
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(out.String(), "Everything is ready") {
		select {
		case err := <-exited:
			t.Fatalf("the collector exited (%v):\n%s", err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector is not ready:\n%s", out.String())
		}
	}
	// The overlay went to the state directory, written by the image's user.
	fi, err := os.Stat(filepath.Join(bu.rootfs, "var/lib/otelcol-progress/tenants.generated.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != bu.process.User.UID {
		t.Errorf("the overlay belongs to uid %d, want %d", st.Uid, bu.process.User.UID)
	}

	// A driver: progressotel emit, one event per tenant and one forged.
	po := filepath.Join(t.TempDir(), "progressotel")
	build := exec.Command("go", "build", "-o", po, "./cmd/progressotel")
	build.Dir = repoRoot
	if o, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building progressotel: %v: %s", err, o)
	}
	for _, tenant := range []string{"tenant-a", "tenant-b", "tenant-z"} {
		emit := exec.Command(po, "emit", "--type", "deploy/ImageSmoke", "--tenant", tenant, "--detail", "marker=image-"+tenant)
		emit.Env = append(os.Environ(), "OTEL_LOGS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+httpAddr,
			"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_METRICS_EXPORTER=none", "OTEL_TRACES_EXPORTER=none")
		if o, err := emit.CombinedOutput(); err != nil || len(bytes.TrimSpace(o)) > 0 {
			t.Fatalf("progressotel emit --tenant %s: %v: %s", tenant, err, o)
		}
	}

	// Each tenant's record on its topic, with its header; the unknown one
	// on progress_unrouted.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokerAddr), kgo.ConsumeRegex(), kgo.ConsumeTopics("^progress.*"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := map[string]string{"progress_events_tenant-a": "image-tenant-a", "progress_events_tenant-b": "image-tenant-b", "progress_unrouted": "image-tenant-z"}
	got := map[string]string{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for len(got) < len(want) && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			marker, ok := want[r.Topic]
			if !ok || !bytes.Contains(r.Value, []byte(marker)) {
				t.Errorf("unexpected record on %s: %s", r.Topic, r.Value)
				return
			}
			tenant := ""
			for _, h := range r.Headers {
				if h.Key == "tenantId" {
					tenant = string(h.Value)
				}
			}
			if wantTenant := strings.TrimPrefix(r.Topic, "progress_events_"); r.Topic != "progress_unrouted" && tenant != wantTenant {
				t.Errorf("record on %s has tenantId %q", r.Topic, tenant)
			}
			got[r.Topic] = marker
		})
	}
	if len(got) != len(want) {
		t.Fatalf("records reached %v, want %v", got, want)
	}
}
