package main

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/loadbalancingexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
)

// load resolves the shipped files as `otelcol-progress --config a --config
// b ...` does (later files merged over earlier ones), with this
// distribution's providers and factories, and validates the result.
func load(t testing.TB, files ...string) *otelcol.Config {
	t.Helper()
	uris := make([]string, len(files))
	for i, f := range files {
		abs, err := filepath.Abs(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		uris[i] = "file:" + abs
	}
	p, err := otelcol.NewConfigProvider(otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
		URIs: uris, ProviderFactories: providers(), DefaultScheme: "env",
	}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := components()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.Get(context.Background(), f)
	if err != nil {
		t.Fatalf("%v: %v", files, err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatalf("%v: invalid: %v", files, err)
	}
	return cfg
}

// Every shipped file and overlay combination loads and validates with the
// real factories, and every Kafka destination in it keeps its promises:
// raw (JSON body) encoding, a persistent queue on file_storage, one
// consumer (order), retries that never give up, the trace id as message
// key (order per run), and a produce timeout below the shutdown bound.
func TestShippedConfigsValidate(t *testing.T) {
	t.Setenv("PROGRESS_OTLP_BEARER_TOKEN", "token-for-validation")
	t.Setenv("PROGRESS_OTLP_TLS_CERT_FILE", "/nonexistent/cert.pem") // read at start only
	t.Setenv("PROGRESS_OTLP_TLS_KEY_FILE", "/nonexistent/key.pem")
	t.Setenv("PROGRESS_LOCAL_FILE", filepath.Join(t.TempDir(), "local.jsonl"))
	t.Setenv("PROGRESS_TRACES_ENDPOINT", "http://127.0.0.1:4318")
	for _, files := range [][]string{
		{"progress.yaml"},
		{"progress.yaml", "tenants.example.yaml"},
		{"progress.yaml", "auth.yaml"},
		{"progress.yaml", "tls.yaml"},
		{"progress.yaml", "local.yaml"},
		{"progress.yaml", "traces.yaml"},
		{"progress.yaml", "traces-grpc.yaml"},
		{"progress.yaml", "tenants.example.yaml", "tls.yaml", "auth.yaml", "local.yaml", "traces.yaml"},
		{"progress.yaml", "gateway.yaml"},
		{"progress.yaml", "tenants.example.yaml", "gateway.yaml"},
	} {
		cfg := load(t, files...)
		// Behind agents, a record is in the persistent queue before the
		// agent hears it was accepted: nothing in memory between them.
		if files[len(files)-1] == "gateway.yaml" {
			if p := cfg.Service.Pipelines[pipeline.NewIDWithName(pipeline.SignalLogs, "progress")]; len(p.Processors) != 1 || p.Processors[0].Type().String() != "tnco" {
				t.Errorf("%v: logs/progress processors %v, want [tnco] only", files, p.Processors)
			}
		}
		kafkas := 0
		for id, c := range cfg.Exporters {
			kc, ok := c.(*kafkaexporter.Config)
			if !ok {
				continue
			}
			kafkas++
			if kc.Logs.Encoding != "raw" {
				t.Errorf("%v %s: encoding %q, want raw", files, id, kc.Logs.Encoding)
			}
			q := kc.QueueBatchConfig
			if !q.HasValue() || q.Get().StorageID == nil || *q.Get().StorageID != component.MustNewID("file_storage") {
				t.Errorf("%v %s: sending_queue is not persistent on file_storage", files, id)
			} else if q.Get().NumConsumers != 1 {
				t.Errorf("%v %s: %d queue consumers, want 1 (order)", files, id, q.Get().NumConsumers)
			}
			if !kc.BackOffConfig.Enabled || kc.BackOffConfig.MaxElapsedTime != 0 {
				t.Errorf("%v %s: retries give up (%+v)", files, id, kc.BackOffConfig)
			}
			// All in-sync replicas: the only setting under which the
			// producer writes idempotently (one copy, in order, per retry).
			if kc.Producer.RequiredAcks != -1 {
				t.Errorf("%v %s: required_acks %v, want -1 (idempotent, in order)", files, id, kc.Producer.RequiredAcks)
			}
			if !kc.PartitionLogsByTraceID {
				t.Errorf("%v %s: not keyed by trace id (order per run on several partitions)", files, id)
			}
			if kc.TimeoutSettings.Timeout <= 0 || kc.TimeoutSettings.Timeout >= defaultShutdownTimeout {
				t.Errorf("%v %s: produce timeout %v, want below the shutdown bound %v", files, id, kc.TimeoutSettings.Timeout, defaultShutdownTimeout)
			}
		}
		want := 1
		if len(files) > 1 && files[1] == "tenants.example.yaml" {
			want = 3
		}
		if kafkas != want {
			t.Errorf("%v: %d kafka exporters, want %d", files, kafkas, want)
		}
	}
}

// TNCO_KAFKA_BROKERS takes one broker, a comma-separated list or a YAML
// list (the env provider parses values as YAML).
func TestBrokersFromEnv(t *testing.T) {
	for env, want := range map[string][]string{
		"":                             {"127.0.0.1:9092"},
		"kafka-1:9093":                 {"kafka-1:9093"},
		"[kafka-1:9093, kafka-2:9093]": {"kafka-1:9093", "kafka-2:9093"},
		"kafka-1:9093,kafka-2:9093":    {"kafka-1:9093", "kafka-2:9093"},
	} {
		// A subtest each: t.Setenv restores the variable when it ends, so
		// the unset case never sees another case's value.
		t.Run(env, func(t *testing.T) {
			if env != "" {
				t.Setenv("TNCO_KAFKA_BROKERS", env)
			}
			cfg := load(t, "progress.yaml")
			got := cfg.Exporters[component.MustNewIDWithName("kafka", "unrouted")].(*kafkaexporter.Config).ClientConfig.Brokers
			if len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
				t.Errorf("TNCO_KAFKA_BROKERS=%q: brokers %q, want %q", env, got, want)
			}
		})
	}
}

// The agent tier keeps the promises the two-tier deployment depends on
// (docs/collector.md, "Scaling out"): records of one trace to one gateway
// (routing by trace id), a persistent queue with one consumer and retries
// that never give up, and no queue or retry of the per-gateway exporters
// (a failure goes back to the persistent queue instead of an in-memory
// one). The gateways come from PROGRESS_GATEWAYS as a YAML list, or from
// DNS with agent-dns.yaml (which replaces the static list).
func TestAgentConfigValidates(t *testing.T) {
	t.Setenv("PROGRESS_OTLP_BEARER_TOKEN", "token-for-validation")
	t.Setenv("PROGRESS_OTLP_TLS_CERT_FILE", "/nonexistent/cert.pem")
	t.Setenv("PROGRESS_OTLP_TLS_KEY_FILE", "/nonexistent/key.pem")
	t.Setenv("PROGRESS_GATEWAYS", "[gw-0:4317, gw-1:4317, gw-2:4317]")
	t.Setenv("PROGRESS_GATEWAYS_DNS", "gateway.progress.svc.cluster.local")
	t.Setenv("PROGRESS_GATEWAY_BEARER_TOKEN", "gateway-token-for-validation")
	for _, files := range [][]string{
		{"agent.yaml"},
		{"agent.yaml", "tls.yaml", "auth.yaml"},
		{"agent.yaml", "agent-dns.yaml"},
		{"agent.yaml", "agent-auth.yaml"},
		{"agent.yaml", "tls.yaml", "agent-auth.yaml", "agent-dns.yaml"},
	} {
		cfg := load(t, files...)
		lb, ok := cfg.Exporters[component.MustNewID("load_balancing")].(*loadbalancingexporter.Config)
		if !ok {
			t.Fatalf("%v: no load_balancing exporter", files)
		}
		if lb.RoutingKey != "traceID" {
			t.Errorf("%v: routing_key %q, want traceID", files, lb.RoutingKey)
		}
		q := lb.QueueSettings
		if !q.HasValue() || q.Get().StorageID == nil || *q.Get().StorageID != component.MustNewID("file_storage") {
			t.Errorf("%v: sending_queue is not persistent on file_storage", files)
		} else if q.Get().NumConsumers != 1 {
			t.Errorf("%v: %d queue consumers, want 1 (order)", files, q.Get().NumConsumers)
		}
		if !lb.BackOffConfig.Enabled || lb.BackOffConfig.MaxElapsedTime != 0 {
			t.Errorf("%v: retries give up (%+v)", files, lb.BackOffConfig)
		}
		if lb.Protocol.OTLP.QueueConfig.HasValue() || lb.Protocol.OTLP.RetryConfig.Enabled {
			t.Errorf("%v: the per-gateway exporter queues or retries on its own", files)
		}
		static, dns := lb.Resolver.Static.HasValue(), lb.Resolver.DNS.HasValue()
		if slices.Contains(files, "agent-dns.yaml") {
			if static || !dns || lb.Resolver.DNS.Get().Hostname != "gateway.progress.svc.cluster.local" {
				t.Errorf("%v: resolver static %v, dns %v: want the DNS name only", files, static, dns)
			}
		} else if !static || dns || len(lb.Resolver.Static.Get().Hostnames) != 3 {
			t.Errorf("%v: resolver static %v, dns %v: want the 3 gateways of PROGRESS_GATEWAYS", files, static, dns)
		}
		// A refusal of the agent's credentials is retried, not dropped
		// (the admission extension's client middleware); with
		// agent-auth.yaml the agent presents its token.
		if mw := lb.Protocol.OTLP.ClientConfig.Middlewares; len(mw) != 1 || mw[0].ID != component.MustNewID("admission") {
			t.Errorf("%v: per-gateway middlewares %v, want [admission]", files, mw)
		}
		auth := lb.Protocol.OTLP.ClientConfig.Auth
		if slices.Contains(files, "agent-auth.yaml") != (auth.HasValue() && auth.Get().AuthenticatorID == component.MustNewIDWithName("bearertokenauth", "gateway")) {
			t.Errorf("%v: per-gateway auth %+v", files, auth)
		}
		// Every signal the library sends has a pipeline (a driver pointed
		// at an agent gets no 404): logs and spans to the gateways,
		// metrics counted and dropped.
		for _, sig := range []pipeline.Signal{pipeline.SignalLogs, pipeline.SignalTraces, pipeline.SignalMetrics} {
			p := cfg.Service.Pipelines[pipeline.NewID(sig)]
			want := component.MustNewID("load_balancing")
			if sig == pipeline.SignalMetrics {
				want = component.MustNewIDWithName("debug", "metrics")
			}
			if p == nil || len(p.Exporters) != 1 || p.Exporters[0] != want {
				t.Errorf("%v: %s pipeline %+v, want it exporting to %v only", files, sig, p, want)
			}
		}
	}
}

// A gateway's gRPC receiver takes the largest request an agent forwards:
// what its OTLP/HTTP receiver accepts (PROGRESS_MAX_REQUEST_BYTES),
// re-encoded, with gateway.yaml's margin of 60% for the fields the
// re-encoding adds; gRPC's default of 4 MiB refused it.
func TestGatewayTakesWhatAnAgentAccepts(t *testing.T) {
	agentHTTP := load(t, "agent.yaml").Receivers[component.MustNewID("otlp")].(*otlpreceiver.Config).Protocols.HTTP.Get().ServerConfig.MaxRequestBodySize
	gw := load(t, "progress.yaml", "gateway.yaml").Receivers[component.MustNewID("otlp")].(*otlpreceiver.Config).Protocols.GRPC.Get()
	if got := int64(gw.MaxRecvMsgSizeMiB) << 20; got < agentHTTP*16/10 {
		t.Errorf("gateway gRPC limit %d bytes, below 1.6 times the agent's OTLP/HTTP body limit %d", got, agentHTTP)
	}
}
