package tncoprocessor

import (
	"context"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/redactionprocessor"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

// Type is the processor's type name in a collector configuration.
var Type = component.MustNewType("tnco")

// NewFactory returns the factory of the tnco processor (logs only).
func NewFactory() processor.Factory {
	return processor.NewFactory(Type, createDefaultConfig,
		processor.WithLogs(createLogs, component.StabilityLevelBeta))
}

func createDefaultConfig() component.Config {
	red := *redactionprocessor.NewFactory().CreateDefaultConfig().(*redactionprocessor.Config)
	red.AllowAllKeys = true
	red.Summary = "silent"
	return &Config{
		MaxMessageBytes: 900000,
		Body:            BodyBytes,
		KeepAttributes:  []string{"*"},
		Redaction:       red,
	}
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := newTNCO(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}
