// Command progressotel-kube applies (or deletes) Kubernetes objects and
// waits until they are ready (or gone), reporting it live with
// progressotel: kube.Applier for drivers in other languages.
//
//	progressotel-kube apply -f objects.yaml --timeout 5m
//	progressotel-kube delete -f objects.yaml
//	cat objects.yaml | progressotel-kube apply -f -
//
// The cluster is the kubeconfig's (--kubeconfig, else KUBECONFIG, else
// ~/.kube/config; --context picks another context). The output is what
// otelbridge.Setup gives: the live view on a terminal by default,
// OTEL_LOGS_EXPORTER and OTEL_EXPORTER_OTLP_* as everywhere.
//
// The exit status says how it ended: 0 every object ready (or gone), 1 an
// object failed (refused by the API server, kstatus Failed, gone while
// waited for; also when the time then ran out for others) or the command
// was interrupted, 2 timed out, 3 the command could not run (bad flags, an
// unreadable file, no cluster).
//
// It is a binary of the kube module rather than a subcommand of
// progressotel, so that the core module never depends on client-go.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/progressotel/progressotel/kube"
	"github.com/progressotel/progressotel/otelbridge"
)

// The exit statuses.
const (
	exitReady   = 0
	exitFailed  = 1
	exitTimeout = 2
	exitUsage   = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "apply" && args[0] != "delete") {
		fmt.Fprintln(stderr, "usage: progressotel-kube apply|delete -f FILE [--timeout 5m] [--field-manager NAME] [--force-conflicts] [--kubeconfig FILE] [--context NAME]")
		return exitUsage
	}
	verb := args[0]
	unusable := func(a ...any) int {
		fmt.Fprintln(stderr, append([]any{"progressotel-kube:"}, a...)...)
		return exitUsage
	}
	fs := flag.NewFlagSet("progressotel-kube "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "the objects, YAML or JSON (- for stdin)")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long to wait for every object (0: no limit)")
	manager := fs.String("field-manager", kube.DefaultFieldManager, "the field manager of the server-side apply")
	force := fs.Bool("force-conflicts", false, "take over fields another field manager owns")
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)")
	kubecontext := fs.String("context", "", "the kubeconfig context (default: its current one)")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if *file == "" || fs.NArg() > 0 {
		return unusable("-f FILE is required, and nothing else")
	}
	objs, err := readObjects(*file, stdin)
	if err != nil {
		return unusable(err)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: *kubecontext}).ClientConfig()
	if err != nil {
		return unusable("no cluster:", err)
	}
	tel, err := otelbridge.Setup(ctx)
	if err != nil {
		return unusable(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()

	opts := []kube.ApplyOption{kube.WithTimeout(*timeout), kube.WithFieldManager(*manager)}
	if *force {
		opts = append(opts, kube.WithForceConflicts())
	}
	a, err := kube.NewApplier(cfg, nil, opts...)
	if err != nil {
		return unusable(err)
	}
	if verb == "apply" {
		_, err = a.Apply(ctx, objs)
	} else {
		_, err = a.Delete(ctx, objs)
	}
	return exitCode(err)
}

// exitCode maps Apply's and Delete's error to the exit status: an object
// failed (also when the time then ran out for the others) or cancelled is
// exitFailed.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitReady
	case errors.Is(err, kube.ErrTimeout) && !errors.Is(err, kube.ErrFailed):
		return exitTimeout
	}
	return exitFailed
}

func readObjects(file string, stdin io.Reader) ([]*unstructured.Unstructured, error) {
	r := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return kube.ReadObjects(r)
}
