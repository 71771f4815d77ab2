package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/progressotel/progressotel/deploy/internal/imagetest"
)

// The image is what a platform team expects: tagged with the distribution's
// version, labelled, not root, no shell, and its state directory owned by
// its user.
func TestImageShape(t *testing.T) {
	bu := imagetest.Unpack(t)
	manifest, err := os.ReadFile(filepath.Join(imagetest.RepoRoot(), "collector-config", "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if bu.Tag == "" || !bytes.Contains(manifest, []byte("  version: "+bu.Tag+"\n")) {
		t.Errorf("tag %q is not the distribution's version (builder-config.yaml)", bu.Tag)
	}
	if bu.Process.User.UID == 0 || bu.Process.User.GID == 0 {
		t.Errorf("the image runs as %d:%d, want a non-root user", bu.Process.User.UID, bu.Process.User.GID)
	}
	if len(bu.Process.Args) != 1 || bu.Process.Args[0] != "/entrypoint" {
		t.Errorf("entrypoint %q, want [/entrypoint]", bu.Process.Args)
	}
	for _, sh := range []string{"bin/sh", "usr/bin/sh", "bin/busybox"} {
		if _, err := os.Stat(filepath.Join(bu.Rootfs, sh)); err == nil {
			t.Errorf("the image has a shell: /%s", sh)
		}
	}
	fi, err := os.Stat(filepath.Join(bu.Rootfs, "var/lib/otelcol-progress"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != bu.Process.User.UID {
		t.Errorf("/var/lib/otelcol-progress belongs to uid %d, want the image's user %d", st.Uid, bu.Process.User.UID)
	}
	// Every file run.sh can select, and so the entrypoint (held to run.sh
	// by TestSameCommandAsRunSh), is in the image.
	runSh, err := os.ReadFile(filepath.Join(imagetest.RepoRoot(), "collector-config", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	selected := regexp.MustCompile(`"\$here/([A-Za-z0-9._-]+\.yaml)"`).FindAllSubmatch(runSh, -1)
	if len(selected) < 10 {
		t.Fatalf("run.sh names %d config files; the pattern no longer reads it", len(selected))
	}
	for _, m := range selected {
		if _, err := os.Stat(filepath.Join(bu.Rootfs, "etc/otelcol-progress", string(m[1]))); err != nil {
			t.Errorf("config %s (run.sh selects it) missing: %v", m[1], err)
		}
	}

	// The labels, read through go-containerregistry.
	lay := t.TempDir()
	if out, err := exec.Command("tar", "-xf", imagetest.Archive(t), "-C", lay).CombinedOutput(); err != nil {
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
	if v := cf.Config.Labels["org.opencontainers.image.version"]; v != bu.Tag {
		t.Errorf("version label %q, tag %q", v, bu.Tag)
	}
	size, err := os.Stat(imagetest.Archive(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s: archive %.1f MiB", bu.Tag, float64(size.Size())/(1<<20))
}

// The image's entrypoint, run from the unpacked root as the image's user,
// takes PROGRESS_TENANTS, writes its overlay into its own state directory,
// and the collector routes each tenant's records to that tenant's topic on
// a Kafka-protocol broker (kfake), an unknown tenant's to progress_unrouted.
func TestImageRoutesTenants(t *testing.T) {
	bu := imagetest.Unpack(t)
	broker := imagetest.Broker(t)
	c, err := bu.Start(t, []string{"PROGRESS_TENANTS=tenant-a tenant-b", "TNCO_KAFKA_BROKERS=" + broker})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(bu.Rootfs, "var/lib/otelcol-progress/tenants.generated.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != bu.Process.User.UID {
		t.Errorf("the overlay belongs to uid %d, want %d", st.Uid, bu.Process.User.UID)
	}

	po := imagetest.Progressotel(t)
	for _, tenant := range []string{"tenant-a", "tenant-b", "tenant-z"} {
		emit := exec.Command(po, "emit", "--type", "deploy/ImageSmoke", "--tenant", tenant, "--detail", "marker=image-"+tenant)
		emit.Env = append(os.Environ(), "OTEL_LOGS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+c.HTTP,
			"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_METRICS_EXPORTER=none", "OTEL_TRACES_EXPORTER=none")
		if o, err := emit.CombinedOutput(); err != nil {
			t.Fatalf("progressotel emit --tenant %s: %v: %s", tenant, err, o)
		}
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeRegex(), kgo.ConsumeTopics("^progress.*"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := map[string]string{"progress_events_tenant-a": "image-tenant-a", "progress_events_tenant-b": "image-tenant-b", "progress_unrouted": "image-tenant-z"}
	got := map[string]bool{}
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
			if r.Topic != "progress_unrouted" && tenant != strings.TrimPrefix(r.Topic, "progress_events_") {
				t.Errorf("record on %s has tenantId %q", r.Topic, tenant)
			}
			got[r.Topic] = true
		})
	}
	if len(got) != len(want) {
		t.Fatalf("records reached %v, want %v\ncollector output:\n%s", got, want, c.Out)
	}
}

// The agent's queue, as the chart mounts it: an emptyDir as the kubelet
// leaves it for a pod with fsGroup 10001 (root:10001, setgid, group
// writable) is written by the image's user; a hostPath directory as the
// kubelet creates one for DirectoryOrCreate (root:root 0755) is not, and
// the agent refuses to start, which is why the chart never asks for one.
func TestAgentQueueOwnership(t *testing.T) {
	bu := imagetest.Unpack(t)
	const fsGroup = 10001
	for _, c := range []struct {
		name      string
		uid, gid  int
		mode      os.FileMode
		wantStart bool
	}{
		{"emptyDir with fsGroup", 0, fsGroup, 0o770 | os.ModeSetgid, true},
		{"hostPath DirectoryOrCreate", 0, 0, 0o755, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := "/queue-" + strings.ReplaceAll(c.name, " ", "-")
			host := filepath.Join(bu.Rootfs, dir)
			if err := os.Mkdir(host, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(host, c.uid, c.gid); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(host, c.mode); err != nil {
				t.Fatal(err)
			}
			col, err := bu.Start(t, []string{"PROGRESS_TIER=agent", "PROGRESS_STORAGE_DIR=" + dir,
				"PROGRESS_GATEWAYS=[127.0.0.1:" + strconv.Itoa(imagetest.FreePort(t)) + "]"}, fsGroup)
			switch {
			case c.wantStart && err != nil:
				t.Fatal(err)
			case !c.wantStart && err == nil:
				t.Fatalf("the agent started on a queue directory it cannot write:\n%s", col.Out)
			case !c.wantStart && !strings.Contains(err.Error(), "permission denied"):
				t.Fatalf("the agent failed, but not for the permission: %v", err)
			}
			if c.wantStart {
				entries, err := os.ReadDir(host)
				if err != nil || len(entries) == 0 {
					t.Errorf("the agent wrote no queue into %s (%v)", dir, err)
				}
			}
		})
	}
}
