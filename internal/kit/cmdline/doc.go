// Package cmdline is the one home of the command-line handling that the
// tool adapters and the progressotel command share: quoting for a POSIX
// shell, and the flags and subcommand of a CLI in the style of Go's flag
// package (-name, --name, -name=value), which Terraform and OpenTofu use.
package cmdline
