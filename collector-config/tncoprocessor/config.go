package tncoprocessor

import (
	"errors"
	"fmt"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/redactionprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/transformprocessor"
)

// What the processor writes as the body of a progress record.
const (
	// BodyBytes: the message as JSON bytes, which a kafka exporter with
	// encoding: raw writes as they are. The default.
	BodyBytes = "bytes"
	// BodyMap: the message as a map, for exporters that show a body
	// (file, debug); kafka's encoding: raw writes the same bytes from it,
	// at the cost of one JSON encoding per record.
	BodyMap = "map"
)

// Config of the tnco processor.
type Config struct {
	// MaxMessageBytes is the largest message the fast path forwards; a
	// larger one takes the stock processors and their size guard
	// (docs/collector.md, "Message size"). Set it to the guard's limit.
	MaxMessageBytes int `mapstructure:"max_message_bytes"`
	// Body is BodyBytes or BodyMap.
	Body string `mapstructure:"body"`
	// KeepAttributes are the record attributes kept once the message is
	// built (routing reads progress.tenant); the message holds the others.
	// "*" keeps every attribute. Resource and scope attributes stay.
	KeepAttributes []string `mapstructure:"keep_attributes"`
	// Transform is the stock transform processor's configuration: the
	// statements that build the TNCO message for records the fast path
	// leaves to them.
	Transform transformprocessor.Config `mapstructure:"transform"`
	// Redaction is the stock redaction processor's configuration, run
	// after Transform; the fast path applies the same rules when it
	// implements them (fastPathFor).
	Redaction redactionprocessor.Config `mapstructure:"redaction"`
	// SizeGuard is a transform processor's configuration that the stock
	// path runs last, after Redaction: the statements that keep a message
	// within Kafka's limit, measured after its last change. A statement
	// that sets SizeGuardAttribute says what it did; the processor counts
	// it. Optional.
	SizeGuard transformprocessor.Config `mapstructure:"size_guard"`
}

// Validate checks the processor's own fields; the collector validates the
// nested configurations with their own rules.
func (c *Config) Validate() error {
	var errs []error
	if c.MaxMessageBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_message_bytes must be positive, got %d", c.MaxMessageBytes))
	}
	if c.Body != BodyBytes && c.Body != BodyMap {
		errs = append(errs, fmt.Errorf("body must be %q or %q, got %q", BodyBytes, BodyMap, c.Body))
	}
	for _, k := range c.KeepAttributes {
		if k == "" {
			errs = append(errs, errors.New("keep_attributes: an empty name"))
		}
	}
	if len(c.Transform.LogStatements) == 0 {
		errs = append(errs, errors.New("transform.log_statements: the statements that build the message are required"))
	}
	return errors.Join(errs...)
}
