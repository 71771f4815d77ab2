package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
)

// resource builds the resource in the OpenTelemetry SDKs' order of
// precedence, each layer overriding the ones before: what the SDK detects
// (telemetry.sdk.*, process.* except the command line, service.name
// unknown_service:<executable>), WithResource, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_SERVICE_NAME. The SDK's detector reads os.Getenv, not withEnv.
//
// process.command_args is left out on purpose: a command line can hold
// secrets, and the resource is sent with every batch, past the redaction.
func (c *config) resource(ctx context.Context) (*resource.Resource, error) {
	detected, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithProcessPID(), resource.WithProcessExecutableName(), resource.WithProcessExecutablePath(),
		resource.WithProcessOwner(), resource.WithProcessRuntimeName(), resource.WithProcessRuntimeVersion(),
		resource.WithProcessRuntimeDescription(),
		resource.WithAttributes(attribute.String("service.name", "unknown_service:"+filepath.Base(os.Args[0]))))
	if err != nil {
		if detected == nil {
			return nil, fmt.Errorf("otelbridge: resource: %w", err)
		}
		otel.Handle(fmt.Errorf("otelbridge: resource: %w", err)) // partly detected: keep what was
	}
	env, err := resource.New(ctx, resource.WithFromEnv())
	if err != nil {
		if env == nil || !errors.Is(err, resource.ErrPartialResource) {
			return nil, fmt.Errorf("otelbridge: OTEL_RESOURCE_ATTRIBUTES: %w", err)
		}
		otel.Handle(fmt.Errorf("otelbridge: OTEL_RESOURCE_ATTRIBUTES: %w", err))
	}
	return merge(merge(detected, c.res), env), nil
}

// merge returns b over a. Resources with different schema URLs still merge,
// into a schemaless resource (resource.Merge's documented result): the
// attributes matter more than the schema they were written for.
func merge(a, b *resource.Resource) *resource.Resource {
	r, _ := resource.Merge(a, b)
	return r
}
