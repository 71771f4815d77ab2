package tncoprocessor

import (
	"errors"
	"fmt"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/redactionprocessor"
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
	// MaxMessageBytes is the largest message the processor writes: a
	// larger one is cut, its details emptied, or replaced by a
	// common/EventsDropped report (docs/collector.md, "Message size").
	MaxMessageBytes int `mapstructure:"max_message_bytes"`
	// Body is BodyBytes or BodyMap.
	Body string `mapstructure:"body"`
	// KeepAttributes are the record attributes kept once the message is
	// built (routing reads progress.tenant); the message holds the others.
	// "*" keeps every attribute. Resource and scope attributes stay.
	KeepAttributes []string `mapstructure:"keep_attributes"`
	// Redaction is the redaction processor's configuration, applied to
	// every attribute before the message is built. The processor
	// implements the options the shipped configuration uses; any other
	// is refused by Validate.
	Redaction redactionprocessor.Config `mapstructure:"redaction"`
}

// Validate checks the processor's own fields and that it applies the
// redaction configuration exactly.
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
	if _, err := rulesFor(&c.Redaction); err != nil {
		errs = append(errs, fmt.Errorf("redaction: %w (the tnco processor applies allow_all_keys, blocked_key_patterns and blocked_values with a literal, summary silent)", err))
	}
	return errors.Join(errs...)
}
