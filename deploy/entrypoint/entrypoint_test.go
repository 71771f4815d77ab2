package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The shell tools that the entrypoint stands in for, in this repository.
var configDir, _ = filepath.Abs(filepath.Join("..", "..", "collector-config"))

// stripHeader drops the leading comment lines, the only part where the
// entrypoint's overlay and gen-tenants.sh's may differ (who made it).
func stripHeader(b []byte) []byte {
	for bytes.HasPrefix(b, []byte("#")) {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	return b
}

// The overlay is gen-tenants.sh's, byte for byte below its header, and the
// same ids are refused (gen-tenants.sh is in turn held to
// tenants.example.yaml by the collector's e2e suite).
func TestTenantOverlayIsGenTenants(t *testing.T) {
	gen := filepath.Join(configDir, "gen-tenants.sh")
	for _, tenants := range [][]string{{"tenant-a", "tenant-b"}, {"x"}, {"A.b_c-9", "0z", strings.Repeat("t", 64)}} {
		want, err := exec.Command(gen, tenants...).Output()
		if err != nil {
			t.Fatalf("gen-tenants.sh %q: %v", tenants, err)
		}
		got, err := tenantOverlay("test", tenants)
		if err != nil {
			t.Fatalf("%q: %v", tenants, err)
		}
		if !bytes.Equal(stripHeader(got), stripHeader(want)) {
			t.Errorf("%q: the entrypoint's overlay differs from gen-tenants.sh's:\n%s\nwant:\n%s", tenants, got, want)
		}
	}
	for _, bad := range [][]string{{}, {`a"b`}, {"-a"}, {"a/b"}, {"ok", "ok"}, {"x\ny"}, {strings.Repeat("t", 65)}, {"é"}} {
		if exec.Command(gen, bad...).Run() == nil {
			t.Fatalf("gen-tenants.sh %q succeeded; the test expects a refusal", bad)
		}
		var u *usageError
		if _, err := tenantOverlay("test", bad); !errors.As(err, &u) {
			t.Errorf("%q: got %v, want a refusal as gen-tenants.sh's", bad, err)
		}
	}
}

// For every switch of run.sh, the entrypoint starts the collector with the
// same command line, writes the same tenant overlay, and refuses the same
// settings with the same exit status. run.sh runs for real, with a
// script as its collector that prints each argument on a line of its own
// (the inline config of an agent with both tokens has spaces in it).
func TestSameCommandAsRunSh(t *testing.T) {
	cases := []map[string]string{
		{},
		{"PROGRESS_TIER": "single", "PROGRESS_TENANTS": "tenant-a tenant-b"},
		{"PROGRESS_TIER": "gateway", "PROGRESS_TENANTS": " tenant-a\ttenant-b "},
		{"PROGRESS_TIER": "gateway", "PROGRESS_TENANTS_FILE": "/etc/tenants.yaml", "PROGRESS_TENANTS": "ignored"},
		{"PROGRESS_TIER": "agent"},
		{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAYS_DNS": "gw.progress.svc", "PROGRESS_OTLP_BEARER_TOKEN": "t", "PROGRESS_OTLP_TLS_CERT_FILE": "/c"},
		{"PROGRESS_OTLP_BEARER_TOKEN": "t", "PROGRESS_OTLP_TLS_CERT_FILE": "/c", "PROGRESS_LOCAL_FILE": "/l",
			"PROGRESS_TRACES_ENDPOINT": "http://t", "PROGRESS_METRICS_BACKEND_ENDPOINT": "http://m", "PROGRESS_TENANTS": "a"},
		{"PROGRESS_TRACES_ENDPOINT": "t", "PROGRESS_TRACES_PROTOCOL": "grpc"},
		// an agent presenting a token to its gateways: agent-auth.yaml, and
		// with a token of its own the inline list of both extensions
		{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAY_BEARER_TOKEN": "g", "PROGRESS_GATEWAY_TLS_INSECURE": "false"},
		{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAY_BEARER_TOKEN": "g", "PROGRESS_GATEWAY_TLS_INSECURE": "false", "PROGRESS_GATEWAY_TLS_CA_FILE": "/ca",
			"PROGRESS_OTLP_BEARER_TOKEN": "t", "PROGRESS_OTLP_TLS_CERT_FILE": "/c", "PROGRESS_GATEWAYS_DNS": "gw.progress.svc"},
		{"PROGRESS_TIER": "agent", "PROGRESS_OTLP_BEARER_TOKEN": "t", "PROGRESS_GATEWAY_TLS_INSECURE": "false"},
		{"PROGRESS_TIER": "gateway", "PROGRESS_OTLP_BEARER_TOKEN": "t", "PROGRESS_OTLP_TLS_CERT_FILE": "/c", "PROGRESS_TENANTS": "a",
			"PROGRESS_METRICS_BACKEND_ENDPOINT": "http://m"},
		// the Go runtime's memory policy: defaults per tier, or as set
		{"PROGRESS_TIER": "agent", "PROGRESS_MEMORY_LIMIT_MIB": "1024"},
		{"PROGRESS_MEMORY_LIMIT_MIB": "64", "GOGC": "50"},
		{"PROGRESS_TIER": "gateway", "GOMEMLIMIT": "2GiB"},
		{"PROGRESS_MEMORY_LIMIT_MIB": "lots"}, // no GOMEMLIMIT: the collector refuses the limit
		// refused
		{"PROGRESS_TRACES_ENDPOINT": "t", "PROGRESS_TRACES_PROTOCOL": "udp"},
		{"PROGRESS_TIER": "bogus"},
		{"PROGRESS_TIER": "agent", "PROGRESS_TENANTS": "a"},
		{"PROGRESS_TIER": "agent", "PROGRESS_LOCAL_FILE": "/l"},
		{"PROGRESS_TENANTS": "a/b"},
		{"PROGRESS_TENANTS": "a a"},
		{"PROGRESS_TENANTS": "  "},
		{"PROGRESS_TIER": "agent", "PROGRESS_METRICS_BACKEND_ENDPOINT": "http://m"},
		{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAY_BEARER_TOKEN": "g"},
		{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAY_BEARER_TOKEN": "g", "PROGRESS_GATEWAY_TLS_INSECURE": "true", "PROGRESS_OTLP_BEARER_TOKEN": "t"},
		{"PROGRESS_GATEWAY_BEARER_TOKEN": "g", "PROGRESS_GATEWAY_TLS_INSECURE": "false"},
		{"PROGRESS_TIER": "gateway", "PROGRESS_GATEWAY_BEARER_TOKEN": "g", "PROGRESS_GATEWAY_TLS_INSECURE": "false", "PROGRESS_TENANTS": "a"},
		// refused, after run.sh has written the tenant overlay
		{"PROGRESS_TIER": "agent", "PROGRESS_TENANTS": "a b"},
	}
	echo := filepath.Join(t.TempDir(), "args")
	// The stand-in collector prints the runtime's variables, then its
	// arguments.
	if err := os.WriteFile(echo, []byte("#!/bin/sh\nprintf 'GOGC=%s\\nGOMEMLIMIT=%s\\n' \"${GOGC-}\" \"${GOMEMLIMIT-}\"\nprintf '%s\\n' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, env := range cases {
		// run.sh
		shStorage := t.TempDir()
		cmd := exec.Command(filepath.Join(configDir, "run.sh"), "validate")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PROGRESS_OTELCOL_BIN=" + echo, "PROGRESS_STORAGE_DIR=" + shStorage}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		shCode := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			shCode = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}

		// the entrypoint
		goStorage := t.TempDir()
		getenv := func(k string) string {
			switch k {
			case "PROGRESS_CONFIG_DIR":
				return configDir
			case "PROGRESS_OTELCOL_BIN":
				return echo
			case "PROGRESS_STORAGE_DIR":
				return goStorage
			}
			return env[k]
		}
		bin, args, err := command(getenv, []string{"validate"})
		goCode := 0
		if err != nil {
			goCode = 1
			if errors.As(err, new(*usageError)) {
				goCode = 2
			}
		}
		if goCode != shCode {
			t.Errorf("%v: entrypoint exits %d (%v), run.sh %d (%s)", env, goCode, err, shCode, stderr.String())
			continue
		}
		// Refused or not, the same tenant overlay (or none) is left behind.
		shOverlay, shErr := os.ReadFile(filepath.Join(shStorage, "tenants.generated.yaml"))
		goOverlay, goErr := os.ReadFile(filepath.Join(goStorage, "tenants.generated.yaml"))
		if (shErr == nil) != (goErr == nil) || !bytes.Equal(stripHeader(shOverlay), stripHeader(goOverlay)) {
			t.Errorf("%v: tenant overlays differ:\nentrypoint (%v):\n%s\nrun.sh (%v):\n%s", env, goErr, goOverlay, shErr, shOverlay)
		}
		if shCode != 0 {
			continue
		}
		if bin != echo {
			t.Errorf("%v: binary %s, want %s", env, bin, echo)
		}
		set := map[string]string{"GOGC": env["GOGC"], "GOMEMLIMIT": env["GOMEMLIMIT"]}
		for _, kv := range runtimeEnv(getenv) {
			k, v, _ := strings.Cut(kv, "=")
			set[k] = v
		}
		lines := append([]string{"GOGC=" + set["GOGC"], "GOMEMLIMIT=" + set["GOMEMLIMIT"]}, args...)
		got := strings.ReplaceAll(strings.Join(lines, "\n"), goStorage, "STORAGE")
		want := strings.ReplaceAll(strings.TrimSuffix(string(out), "\n"), shStorage, "STORAGE")
		// run.sh names its configs through its own directory, which may
		// be a relative or symlinked path.
		want = strings.ReplaceAll(want, filepath.Clean(configDir)+"/", configDir+"/")
		if got != want {
			t.Errorf("%v:\nentrypoint: %q\nrun.sh:     %q", env, got, want)
		}
	}
}

// The entrypoint's GOMEMLIMIT defaults are the memory_limiter's: the
// defaults of PROGRESS_MEMORY_LIMIT_MIB in agent.yaml and progress.yaml.
func TestMemoryLimitDefaults(t *testing.T) {
	for file, want := range map[string]string{"agent.yaml": agentMemoryLimitMiB, "progress.yaml": memoryLimitMiB} {
		b, err := os.ReadFile(filepath.Join(configDir, file))
		if err != nil {
			t.Fatal(err)
		}
		if line := "limit_mib: ${env:PROGRESS_MEMORY_LIMIT_MIB:-" + want + "}"; !bytes.Contains(b, []byte(line)) {
			t.Errorf("%s has no %q: the entrypoint's and run.sh's GOMEMLIMIT default is %s MiB", file, line, want)
		}
	}
}
