// Command progressotel brings progressotel to drivers and scripts in any
// language: it runs a tool inside a span with progress events around it
// (for Ansible and OpenTofu/Terraform, with the tool's own events and span
// tree, live), and records events and condition transitions from the
// shell, in the trace of TRACEPARENT:
//
//	progressotel run --operation Install --resource-type nginx --resource-id web -- ansible-playbook site.yml
//	progressotel emit --type common/Progress --details '{"completed": 3, "total": 10}'
//	progressotel transition --stream provisioning --status True --reason Provisioned
//
// Exporters are configured as in every OpenTelemetry SDK; `progressotel
// <command> --help` lists every flag and variable, docs/cli.md has the
// rules. Install it with
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
