package cli

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/view"
	"github.com/progressotel/progressotel/prettyexporter"
)

type viewOptions struct {
	http, grpc, forward string
	allowRemote, plain  bool
	silentAfter         time.Duration
	maxTraces, maxRows  int
	maxRequestBytes     int64
	ready               func(*view.Server) // tests: called once listening
}

func newViewFlags() (*flag.FlagSet, *viewOptions) {
	o := &viewOptions{}
	fs := flag.NewFlagSet("view", flag.ContinueOnError)
	fs.StringVar(&o.http, "http", "127.0.0.1:4318", "OTLP/HTTP (protobuf and JSON) listen `address`; empty: none")
	fs.StringVar(&o.grpc, "grpc", "127.0.0.1:4317", "OTLP/gRPC listen `address`; empty: none")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow listening on an address that is not loopback (anyone who reaches it can write on your terminal)")
	fs.StringVar(&o.forward, "forward", "", "send every request received on, unchanged, to this OTLP/HTTP base `URL` (e.g. http://127.0.0.1:14318)")
	fs.DurationVar(&o.silentAfter, "silent-after", time.Minute, "end a trace as silent after this `duration` without a record or a span")
	fs.IntVar(&o.maxTraces, "max-traces", prettyexporter.DefaultLiveMaxOperations, "the most traces drawn at once; past it, the least recently updated one ends")
	fs.IntVar(&o.maxRows, "max-rows", 500, "the most rows kept per trace; the rest are counted")
	fs.Int64Var(&o.maxRequestBytes, "max-request-bytes", 16<<20, "the largest request body, decompressed; larger ones get 413")
	fs.BoolVar(&o.plain, "plain", false, "plain lines even on a terminal")
	return fs, o
}

var viewCommand = &command{
	name:     "view",
	synopsis: "draw the live tree of any OTLP sender's traces",
	usage:    "progressotel view [--http addr] [--grpc addr] [--forward URL] [flags]",
	description: `Listens for OTLP (http/protobuf and http/json on /v1/logs and /v1/traces,
and gRPC) and draws the live tree of every trace received on stdout: the
spans of any sender (a progressotel driver, OpenTofu with
OTEL_TRACES_EXPORTER=otlp, otel-cli, an SDK) and its log records with an
event name. Where stdout is not a terminal, it writes plain lines.

Spans reach OTLP only when they end: a span's row opens with the first
record naming it, reading "span" and its id, and takes its name, its place
under its parent and its outcome when the span arrives (docs/formats.md).

It binds to loopback only, unless --allow-remote. Malformed requests get
400, oversized ones 413, both counted on screen. It runs until interrupted.`,
	flags: func() *flag.FlagSet { fs, _ := newViewFlags(); return fs },
}

func runView(ctx context.Context, args []string, s stdio) Status {
	fs, o := newViewFlags()
	if st, done := parseCommand(viewCommand, fs, args, s); done {
		return st
	}
	if fs.NArg() > 0 {
		return usageError(viewCommand, s.stderr, invalidf("view takes no arguments"))
	}
	return o.run(ctx, s)
}

func (o *viewOptions) run(ctx context.Context, s stdio) Status {
	for _, a := range []string{o.http, o.grpc} {
		if err := checkListen(a, o.allowRemote); err != nil {
			return usageError(viewCommand, s.stderr, err)
		}
	}
	if o.forward != "" {
		if u, err := url.Parse(o.forward); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError(viewCommand, s.stderr, invalidf("--forward: %q is not an http(s) URL", o.forward))
		}
	}
	if o.silentAfter <= 0 || o.maxTraces < 1 || o.maxRows < 1 || o.maxRequestBytes < 1 {
		return usageError(viewCommand, s.stderr, invalidf("--silent-after, --max-traces, --max-rows and --max-request-bytes must be positive"))
	}
	mode := prettyexporter.LiveAuto
	if o.plain {
		mode = prettyexporter.LivePlain
	}
	live, _ := prettyexporter.NewLive(prettyexporter.WithWriter(s.stdout), prettyexporter.WithLiveMode(mode),
		prettyexporter.WithLiveLimits(0, o.maxTraces))
	out := live.Output()
	notice := func(line string) { fmt.Fprintln(out, line) }
	rec := live.Received(o.maxRows)
	cfg := view.Config{HTTP: o.http, GRPC: o.grpc, Forward: o.forward, MaxBytes: o.maxRequestBytes, Logs: rec, Spans: rec, Notice: notice}
	if live.Plain() {
		cfg.Spans = view.PlainSpans(rec, notice)
	}
	srv, err := view.Start(cfg)
	if err != nil {
		_ = live.Shutdown(context.Background())
		fmt.Fprintf(s.stderr, "progressotel view: %v\n", err)
		return Status{Code: 1}
	}
	var where []string
	if a := srv.HTTPAddr(); a != "" {
		where = append(where, "http://"+a)
	}
	if a := srv.GRPCAddr(); a != "" {
		where = append(where, "grpc "+a)
	}
	notice("progressotel view: listening on " + strings.Join(where, " and "))
	if o.ready != nil {
		o.ready(srv)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	tick := time.NewTicker(min(time.Second, o.silentAfter/2))
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			rec.EndSilent(o.silentAfter)
		}
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Close(closeCtx)
	_ = live.Shutdown(closeCtx)
	return Status{}
}

// checkListen refuses an address that is not loopback, unless allowed.
func checkListen(addr string, allow bool) error {
	if addr == "" || allow {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return invalidf("%q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return invalidf("%q is not a loopback address: add --allow-remote to listen there", addr)
	}
	return nil
}
