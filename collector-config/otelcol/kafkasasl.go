package main

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/kafka/configkafka"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.uber.org/zap"
)

// A wrong SASL username or password must be named in the collector's log.
// The kafka exporter's client (franz-go) logs a failed SASL exchange only
// when the broker answers with an error code; a broker that ends the
// connection instead (as some do, and the kfake test broker does) leaves
// only "EOF" and "context deadline exceeded" in the exporter's retries.
//
// So each kafka logs exporter of this distribution also probes its brokers
// with the same client settings (brokers, TLS, SASL) and a SASL mechanism
// it watches: when an exchange began and the connection failed before the
// broker accepted it, it logs saslRefused at error level with the
// mechanism and the username (never the password). It probes at start and
// then every saslProbeInterval until one exchange succeeds, and stops with
// the exporter.

const (
	// saslProbeInterval is the time between two probes while they fail.
	saslProbeInterval = 30 * time.Second
	// saslProbeTimeout bounds one probe.
	saslProbeTimeout = 5 * time.Second
	// saslRefused is the log message of a refused authentication; the
	// end-to-end tests look for it.
	saslRefused = "Kafka refused the SASL authentication: check the mechanism, username and password (TNCO_KAFKA_SASL)"
)

// withSASLProbe returns the kafka exporter factory f with the probe added
// to its logs exporters.
func withSASLProbe(f exporter.Factory) exporter.Factory {
	return exporter.NewFactory(f.Type(), f.CreateDefaultConfig,
		exporter.WithLogs(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
			e, err := f.CreateLogs(ctx, set, cfg)
			if err != nil {
				return nil, err
			}
			kc, ok := cfg.(*kafkaexporter.Config)
			if !ok {
				return e, nil
			}
			mech, user := saslMechanism(&kc.ClientConfig.Authentication)
			if mech == nil {
				return e, nil
			}
			return &probedLogs{Logs: e, logger: set.Logger, cfg: kc.ClientConfig, mech: mech, user: user}, nil
		}, f.LogsStability()),
		exporter.WithTraces(f.CreateTraces, f.TracesStability()),
		exporter.WithMetrics(f.CreateMetrics, f.MetricsStability()),
	)
}

// saslMechanism builds the mechanism the exporter's client uses, for the
// mechanisms whose failure a probe can tell (PLAIN and SCRAM), and returns
// its username; nil for none or another.
func saslMechanism(a *configkafka.AuthenticationConfig) (func() sasl.Mechanism, string) {
	if p := a.PlainText; p != nil {
		return func() sasl.Mechanism { return plain.Auth{User: p.Username, Pass: p.Password}.AsMechanism() }, p.Username
	}
	s := a.SASL
	if s == nil {
		return nil, ""
	}
	switch strings.ToUpper(s.Mechanism) {
	case "PLAIN":
		return func() sasl.Mechanism { return plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism() }, s.Username
	case "SCRAM-SHA-256":
		return func() sasl.Mechanism { return scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism() }, s.Username
	case "SCRAM-SHA-512":
		return func() sasl.Mechanism { return scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism() }, s.Username
	}
	return nil, ""
}

// probedLogs is a kafka logs exporter that checks its brokers' SASL
// authentication in the background.
type probedLogs struct {
	exporter.Logs
	logger *zap.Logger
	cfg    configkafka.ClientConfig
	mech   func() sasl.Mechanism
	user   string

	cancel context.CancelFunc
	done   chan struct{}
}

func (p *probedLogs) Start(ctx context.Context, host component.Host) error {
	if err := p.Logs.Start(ctx, host); err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go func() {
		defer close(p.done)
		for !p.try(pctx) {
			select {
			case <-pctx.Done():
				return
			case <-time.After(saslProbeInterval):
			}
		}
	}()
	return nil
}

func (p *probedLogs) Shutdown(ctx context.Context) error {
	if p.cancel != nil { // a second Shutdown finds the probe stopped
		p.cancel()
		<-p.done
	}
	return p.Logs.Shutdown(ctx)
}

// try probes once; true when an exchange succeeded, or when probing
// cannot tell anything (the TLS settings do not load: the exporter
// reports that itself).
func (p *probedLogs) try(ctx context.Context) bool {
	m := &watchedMechanism{Mechanism: p.mech()}
	opts := []kgo.Opt{kgo.SeedBrokers(p.cfg.Brokers...), kgo.SASL(m), kgo.DisableClientMetrics(),
		kgo.RequestRetries(0), kgo.DialTimeout(saslProbeTimeout)}
	tlsCfg := p.cfg.TLS
	if tlsCfg == nil {
		tlsCfg = p.cfg.Authentication.TLS
	}
	if tlsCfg != nil {
		c, err := tlsCfg.LoadTLSConfig(ctx)
		if err != nil {
			return true
		}
		if c != nil {
			opts = append(opts, kgo.DialTLSConfig(c.Clone()))
		}
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return true
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, saslProbeTimeout)
	defer cancel()
	err = cl.Ping(pctx)
	if err == nil || m.accepted.Load() {
		return true
	}
	if m.began.Load() && ctx.Err() == nil {
		p.logger.Error(saslRefused, zap.String("mechanism", m.Name()), zap.String("username", p.user),
			zap.Strings("brokers", p.cfg.Brokers), zap.Error(err))
	}
	return false
}

// watchedMechanism is a SASL mechanism that records whether an exchange
// began and whether the broker accepted one.
type watchedMechanism struct {
	sasl.Mechanism
	began, accepted atomic.Bool
}

func (m *watchedMechanism) Authenticate(ctx context.Context, host string) (sasl.Session, []byte, error) {
	s, first, err := m.Mechanism.Authenticate(ctx, host)
	if err != nil {
		return s, first, err
	}
	m.began.Store(true)
	return &watchedSession{Session: s, m: m}, first, nil
}

type watchedSession struct {
	sasl.Session
	m *watchedMechanism
}

// Challenge passes the broker's message on; for SCRAM, done without error
// means the client verified the broker's final message, so the broker
// accepted the credentials. PLAIN has no such message: the probe's
// request succeeding is its proof.
func (s *watchedSession) Challenge(resp []byte) (bool, []byte, error) {
	done, out, err := s.Session.Challenge(resp)
	if done && err == nil && strings.HasPrefix(s.m.Name(), "SCRAM") {
		s.m.accepted.Store(true)
	}
	return done, out, err
}
