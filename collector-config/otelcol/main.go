// Program otelcol-progress is the OpenTelemetry Collector distribution of
// progressotel: the components listed in ../builder-config.yaml and nothing
// else. It has the shape the Collector Builder (OCB) generates, written out
// so that `go build` alone builds it; manifest_test.go keeps the two in step.
// One addition to that shape: a bound on the time a stop may take
// (shutdown.go), which a stock or OCB-built collector does not have.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/otelcol"
)

// The distribution's identity; equal to dist.name / dist.version of the manifest.
const (
	distName    = "otelcol-progress"
	distVersion = "0.158.0-progressotel"
)

func main() {
	timeout, err := shutdownTimeout(os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", distName, err)
		os.Exit(2)
	}
	if timeout > 0 {
		// The Collector handles these signals itself (graceful shutdown);
		// this only bounds how long that may take. See shutdownWatchdog.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		go shutdownWatchdog{timeout: timeout, exit: os.Exit, log: os.Stderr}.watch(sig)
	}
	if err := otelcol.NewCommand(settings()).Execute(); err != nil {
		// cobra has already printed the error.
		os.Exit(1)
	}
}

func settings() otelcol.CollectorSettings {
	return otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     distName,
			Description: "OpenTelemetry Collector distribution for progressotel (progress events to TNCO over Kafka)",
			Version:     distVersion,
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: providers(),
				// As OCB and otelcol-contrib: a bare ${VAR} reads the environment.
				DefaultScheme: "env",
			},
		},
		ProviderModules: providerModules(),
	}
}
