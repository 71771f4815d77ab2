// Command entrypoint is the image's entrypoint: it starts otelcol-progress
// with progress.yaml and the overlays that the environment switches on,
// exactly as collector-config/run.sh does on a host, without a shell (the
// image is FROM scratch). The variables and their meaning are run.sh's
// (docs/collector.md); a test runs both side by side and holds them to the
// same collector command line.
//
// With PROGRESS_TENANTS it writes the tenant overlay that gen-tenants.sh
// would print to $PROGRESS_STORAGE_DIR/tenants.generated.yaml, replaced at
// each start. It then replaces itself with the collector (execve), so that
// the collector is the container's process 1 and gets its signals.
//
// Paths: PROGRESS_CONFIG_DIR (default /etc/otelcol-progress) holds the
// configuration files, PROGRESS_OTELCOL_BIN (default /otelcol-progress) is
// the collector.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Where the image puts things; the environment overrides them.
const (
	defaultConfigDir  = "/etc/otelcol-progress"
	defaultBin        = "/otelcol-progress"
	defaultStorageDir = "/var/lib/otelcol-progress"
)

// usageError is a configuration the entrypoint refuses: exit status 2, as
// run.sh's.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func main() {
	bin, args, err := command(os.Getenv, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "entrypoint:", err)
		var u *usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
	err = syscall.Exec(bin, append([]string{bin}, args...), append(os.Environ(), runtimeEnv(os.Getenv)...))
	fmt.Fprintf(os.Stderr, "entrypoint: starting %s: %v\n", bin, err)
	os.Exit(1)
}

// The memory_limiter's limit when PROGRESS_MEMORY_LIMIT_MIB is unset: the
// defaults of agent.yaml and of progress.yaml (TestMemoryLimitDefaults).
const (
	agentMemoryLimitMiB = "256"
	memoryLimitMiB      = "512"
)

// runtimeEnv returns the Go runtime's memory policy for the collector, as
// run.sh exports it, for the variables getenv does not set: GOGC=200, and
// GOMEMLIMIT at the memory_limiter's limit. A limit that is not a whole
// number sets no GOMEMLIMIT (the Go runtime would stop at a malformed one
// before the collector could name the variable): the collector refuses it.
func runtimeEnv(getenv func(string) string) []string {
	var env []string
	if getenv("GOGC") == "" {
		env = append(env, "GOGC=200")
	}
	def := memoryLimitMiB
	if getenv("PROGRESS_TIER") == "agent" {
		def = agentMemoryLimitMiB
	}
	if limit := or(getenv("PROGRESS_MEMORY_LIMIT_MIB"), def); getenv("GOMEMLIMIT") == "" && strings.Trim(limit, "0123456789") == "" {
		env = append(env, "GOMEMLIMIT="+limit+"MiB")
	}
	return env
}

// command returns the collector binary and its arguments for the
// environment getenv and the extra arguments user; with PROGRESS_TENANTS
// it writes the tenant overlay first, as run.sh does.
func command(getenv func(string) string, user []string) (string, []string, error) {
	dir := or(getenv("PROGRESS_CONFIG_DIR"), defaultConfigDir)
	bin := or(getenv("PROGRESS_OTELCOL_BIN"), defaultBin)
	conf := func(name string) []string { return []string{"--config", filepath.Join(dir, name)} }

	tier := or(getenv("PROGRESS_TIER"), "single")
	if getenv("PROGRESS_GATEWAY_BEARER_TOKEN") != "" && tier != "agent" {
		return "", nil, &usageError{"PROGRESS_GATEWAY_BEARER_TOKEN is the token an agent presents to its gateways (PROGRESS_TIER=agent); a gateway requires its token with PROGRESS_OTLP_BEARER_TOKEN"}
	}

	// The overlays, in the order run.sh prepends them (the last prepended
	// comes first on the command line).
	var overlays [][]string
	// An agent that asks a token of its drivers (auth.yaml) and presents
	// one to its gateways (agent-auth.yaml): each overlay lists the
	// extensions it needs and a later list replaces an earlier one, so the
	// list with both goes last.
	if tier == "agent" && getenv("PROGRESS_OTLP_BEARER_TOKEN") != "" && getenv("PROGRESS_GATEWAY_BEARER_TOKEN") != "" {
		overlays = append(overlays, []string{"--config", "yaml:service::extensions: [file_storage, health_check, admission, bearertokenauth/otlp, bearertokenauth/gateway]"})
	}
	if getenv("PROGRESS_TRACES_ENDPOINT") != "" {
		switch p := or(getenv("PROGRESS_TRACES_PROTOCOL"), "http/protobuf"); p {
		case "http/protobuf":
			overlays = append(overlays, conf("traces.yaml"))
		case "grpc":
			overlays = append(overlays, conf("traces-grpc.yaml"))
		default:
			return "", nil, &usageError{"PROGRESS_TRACES_PROTOCOL=" + p + ": want http/protobuf or grpc"}
		}
	}
	if getenv("PROGRESS_METRICS_BACKEND_ENDPOINT") != "" {
		overlays = append(overlays, conf("metrics.yaml"))
	}
	if getenv("PROGRESS_LOCAL_FILE") != "" {
		overlays = append(overlays, conf("local.yaml"))
	}
	if getenv("PROGRESS_OTLP_BEARER_TOKEN") != "" {
		overlays = append(overlays, conf("auth.yaml"))
	}
	if getenv("PROGRESS_OTLP_TLS_CERT_FILE") != "" {
		overlays = append(overlays, conf("tls.yaml"))
	}
	if f := getenv("PROGRESS_TENANTS_FILE"); f != "" {
		overlays = append(overlays, []string{"--config", f})
	} else if list := getenv("PROGRESS_TENANTS"); list != "" {
		path, err := writeTenants(or(getenv("PROGRESS_STORAGE_DIR"), defaultStorageDir), strings.Fields(list))
		if err != nil {
			return "", nil, err
		}
		overlays = append(overlays, []string{"--config", path})
	}
	switch tier {
	case "single":
		overlays = append(overlays, conf("progress.yaml"))
	case "gateway":
		overlays = append(overlays, append(conf("progress.yaml"), conf("gateway.yaml")...))
	case "agent":
		if getenv("PROGRESS_TENANTS_FILE")+getenv("PROGRESS_TENANTS")+getenv("PROGRESS_LOCAL_FILE")+getenv("PROGRESS_TRACES_ENDPOINT")+getenv("PROGRESS_METRICS_BACKEND_ENDPOINT") != "" {
			return "", nil, &usageError{"PROGRESS_TIER=agent: tenants, the local file, a traces backend and a metrics backend are the gateway's (unset PROGRESS_TENANTS*, PROGRESS_LOCAL_FILE, PROGRESS_TRACES_ENDPOINT, PROGRESS_METRICS_BACKEND_ENDPOINT)"}
		}
		if getenv("PROGRESS_GATEWAY_BEARER_TOKEN") != "" {
			// The bearertokenauth extension sends a token over TLS only; in
			// plain text every send would fail (and be retried for ever).
			if or(getenv("PROGRESS_GATEWAY_TLS_INSECURE"), "true") != "false" {
				return "", nil, &usageError{"PROGRESS_GATEWAY_BEARER_TOKEN is sent over TLS only: set PROGRESS_GATEWAY_TLS_INSECURE=false (and PROGRESS_GATEWAY_TLS_CA_FILE)"}
			}
			overlays = append(overlays, conf("agent-auth.yaml"))
		}
		if getenv("PROGRESS_GATEWAYS_DNS") != "" {
			overlays = append(overlays, conf("agent-dns.yaml"))
		}
		overlays = append(overlays, conf("agent.yaml"))
	default:
		return "", nil, &usageError{"PROGRESS_TIER=" + tier + ": want single, gateway or agent"}
	}
	var args []string
	for i := len(overlays) - 1; i >= 0; i-- {
		args = append(args, overlays[i]...)
	}
	return bin, append(args, user...), nil
}

// writeTenants writes the overlay for tenants into dir, replacing the one
// of the last start, and returns its path.
func writeTenants(dir string, tenants []string) (string, error) {
	overlay, err := tenantOverlay("the image's entrypoint (PROGRESS_TENANTS)", tenants)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "tenants.generated.yaml")
	if err := os.WriteFile(path+".new", overlay, 0o640); err != nil {
		_ = os.Remove(path + ".new")
		return "", err
	}
	return path, os.Rename(path+".new", path)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
