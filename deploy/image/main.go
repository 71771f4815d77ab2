// Command image builds the otelcol-progress container image from files on
// disk, with no daemon, no base image and no shell: one layer FROM scratch
// holding the static collector, the entrypoint (deploy/entrypoint) and the
// collector's configuration files, written as an OCI archive (an OCI image
// layout in a tar, what `skopeo copy oci-archive:…` and `podman load` read).
//
//	go run ./image -collector otelcol-progress -entrypoint entrypoint \
//	    -configs ../collector-config -version 0.158.0-progressotel -out image.oci.tar
//
// The image runs as uid and gid 10001, whose home and default queue
// directory /var/lib/otelcol-progress it owns. Files carry the -created
// time, so that the same inputs give the same digest.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's user: not root, and the owner of its state directory only.
const (
	uid        = 10001
	storageDir = "var/lib/otelcol-progress"
	configDir  = "etc/otelcol-progress"
)

type options struct {
	collector, entrypoint, configs, license string
	version, revision, source, out          string
	created                                 time.Time
}

func main() {
	var o options
	var created string
	flag.StringVar(&o.collector, "collector", "", "the static otelcol-progress binary")
	flag.StringVar(&o.entrypoint, "entrypoint", "", "the static entrypoint binary (deploy/entrypoint)")
	flag.StringVar(&o.configs, "configs", "", "the collector-config directory: its *.yaml but the build manifest go to /"+configDir)
	flag.StringVar(&o.license, "license", "", "the LICENSE file, copied to /LICENSE")
	flag.StringVar(&o.version, "version", "", "the image version and tag (the distribution's version)")
	flag.StringVar(&o.revision, "revision", "", "the source revision (a commit id), for the labels")
	flag.StringVar(&o.source, "source", "", "the source repository URL, for the labels (optional)")
	flag.StringVar(&created, "created", "", "the creation time, Unix seconds (default SOURCE_DATE_EPOCH, else now)")
	flag.StringVar(&o.out, "out", "", "the OCI archive to write")
	flag.Parse()
	if created == "" {
		created = os.Getenv("SOURCE_DATE_EPOCH")
	}
	o.created = time.Now().UTC().Truncate(time.Second)
	if created != "" {
		s, err := strconv.ParseInt(created, 10, 64)
		if err != nil {
			fail(fmt.Errorf("-created %q: want Unix seconds", created))
		}
		o.created = time.Unix(s, 0).UTC()
	}
	if o.collector == "" || o.entrypoint == "" || o.configs == "" || o.version == "" || o.out == "" {
		flag.Usage()
		os.Exit(2)
	}
	size, err := build(o)
	if err != nil {
		fail(err)
	}
	fmt.Printf("image: %s: otelcol-progress:%s, %.1f MiB compressed\n", o.out, o.version, float64(size)/(1<<20))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "image:", err)
	os.Exit(1)
}

// build writes the archive and returns the compressed size of its layer.
func build(o options) (int64, error) {
	rootfs, err := layerTar(o)
	if err != nil {
		return 0, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(rootfs)), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return 0, err
	}
	labels := map[string]string{
		"org.opencontainers.image.title":       "otelcol-progress",
		"org.opencontainers.image.description": "OpenTelemetry Collector distribution for progressotel: progress events per tenant to Kafka",
		"org.opencontainers.image.version":     o.version,
		"org.opencontainers.image.created":     o.created.Format(time.RFC3339),
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	if o.revision != "" {
		labels["org.opencontainers.image.revision"] = o.revision
	}
	if o.source != "" {
		labels["org.opencontainers.image.source"] = o.source
	}
	cfg := &v1.ConfigFile{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Created:      v1.Time{Time: o.created},
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			User:       fmt.Sprintf("%d:%d", uid, uid),
			Entrypoint: []string{"/entrypoint"},
			WorkingDir: "/" + storageDir,
			Env: []string{
				"PROGRESS_CONFIG_DIR=/" + configDir,
				"PROGRESS_OTELCOL_BIN=/otelcol-progress",
				"PROGRESS_STORAGE_DIR=/" + storageDir,
			},
			ExposedPorts: map[string]struct{}{"4317/tcp": {}, "4318/tcp": {}, "8888/tcp": {}, "13133/tcp": {}},
			Volumes:      map[string]struct{}{"/" + storageDir: {}},
			Labels:       labels,
			StopSignal:   "SIGTERM",
		},
	}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return 0, err
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer, History: v1.History{
		Created: v1.Time{Time: o.created}, CreatedBy: "deploy/image: otelcol-progress, entrypoint, collector-config",
	}})
	if err != nil {
		return 0, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img = mutate.Annotations(img, labels).(v1.Image)

	dir, err := os.MkdirTemp("", "otelcol-progress-image-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return 0, err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "otelcol-progress:" + o.version})); err != nil {
		return 0, err
	}
	if err := archive(dir, o.out, o.created); err != nil {
		return 0, err
	}
	return layer.Size()
}

// entry is one file of the layer.
type entry struct {
	name string // without the leading /
	mode int64
	uid  int
	data []byte // nil for a directory
	file string // or read from this path
}

// layerTar is the image's one layer, uncompressed.
func layerTar(o options) ([]byte, error) {
	entries := []entry{
		{name: "etc", mode: 0o755},
		{name: configDir, mode: 0o755},
		{name: "var", mode: 0o755},
		{name: "var/lib", mode: 0o755},
		{name: storageDir, mode: 0o750, uid: uid},
		{name: "tmp", mode: 0o1777},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\notelcol:x:10001:10001:otelcol-progress:/" + storageDir + ":/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\notelcol:x:10001:\n")},
		{name: "otelcol-progress", mode: 0o755, file: o.collector},
		{name: "entrypoint", mode: 0o755, file: o.entrypoint},
	}
	if o.license != "" {
		entries = append(entries, entry{name: "LICENSE", mode: 0o644, file: o.license})
	}
	configs, err := filepath.Glob(filepath.Join(o.configs, "*.yaml"))
	if err != nil {
		return nil, err
	}
	n := 0
	for _, c := range configs {
		// The build manifest and the generated example are not configuration.
		if base := filepath.Base(c); base != "builder-config.yaml" && base != "tenants.example.yaml" {
			entries = append(entries, entry{name: configDir + "/" + base, mode: 0o644, file: c})
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("no configuration files in %s", o.configs)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: o.created, Format: tar.FormatPAX}
		data := e.data
		if e.file != "" {
			b, err := os.ReadFile(e.file)
			if err != nil {
				return nil, err
			}
			data = b
		}
		if data == nil {
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), tw.Close()
}

// archive writes the layout in dir as a tar at out, in name order.
func archive(dir, out string, mtime time.Time) error {
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		h := &tar.Header{Name: name, Mode: 0o644, ModTime: mtime, Typeflag: tar.TypeReg, Size: fi.Size()}
		if fi.IsDir() {
			h = &tar.Header{Name: name + "/", Mode: 0o755, ModTime: mtime, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.IsDir() {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return err
			}
			if _, err := tw.Write(b); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if strings.HasSuffix(out, "/") {
		return fmt.Errorf("-out %s: want a file", out)
	}
	return os.Rename(tmp, out)
}
