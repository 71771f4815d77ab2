// Package e2e is the end-to-end suite of collector-config: it runs the
// built bin/otelcol-progress with the shipped configuration (through
// run.sh, configured by environment variables only) between a driver built
// on progressotel (SDK LoggerProvider, OTLP gRPC exporter, real spans) and
// an in-process Kafka-protocol broker (kfake), and reads back what TNCO
// would receive. It is a module of its own because the collector's
// dependency graph and the core module's OTel versions do not mix; it
// starts the collector as a process instead of linking it.
//
// Run it with `make test-collector`; docs/collector.md lists what each
// test proves. cmd/demo-pipeline is `make demo-pipeline`.
package e2e
