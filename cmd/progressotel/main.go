// Command progressotel brings progressotel to drivers and scripts written
// in any language: it runs a tool inside a span with progress events around
// it (and, for Ansible and OpenTofu/Terraform, the tool's own events and
// span tree, live), and records progress events and condition transitions
// from the shell, in the trace of TRACEPARENT, with the request's tracectx.
//
//	progressotel run --operation Install --resource-type nginx --resource-id web -- ansible-playbook site.yml
//	progressotel emit --type common/Progress --details '{"completed": 3, "total": 10}'
//	progressotel transition --stream provisioning --status True --reason Provisioned
//
// Exporters are configured as in every OpenTelemetry SDK (OTEL_LOGS_EXPORTER,
// OTEL_EXPORTER_OTLP_ENDPOINT, ...). `progressotel <command> --help` lists
// every flag and variable; docs/cli.md has the rules (exit status, signals,
// the environment carrier, the socket between run and emit).
//
// Install it with
//
//	go install github.com/progressotel/progressotel/cmd/progressotel@latest
package main

import (
	"context"
	"os"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/cli"
)

func main() {
	cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr).Exit()
}
