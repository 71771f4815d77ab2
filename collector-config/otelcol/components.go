package main

import (
	"errors"

	"github.com/open-telemetry/opentelemetry-collector-contrib/connector/routingconnector"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/loadbalancingexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/pprofextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/filterprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/redactionprocessor"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/progressotel/progressotel/collector-config/admissionextension"
	"github.com/progressotel/progressotel/collector-config/tncoprocessor"
)

// Module versions, as in the manifest. The Collector reports them in
// `otelcol-progress components`.
const (
	core    = " v0.158.0"
	contrib = " v0.158.0"
	confmod = " v1.64.0"
	// Served here at v0.157.0 but not at v0.158.0 (DESIGN.md, "The
	// collector's version"); v0.157.0 builds against the v0.158.0 core.
	contrib157 = " v0.157.0"
	cp         = "github.com/open-telemetry/opentelemetry-collector-contrib/"
	cc         = "go.opentelemetry.io/collector/"
	// This repository's own components, built from their directories.
	local = "github.com/progressotel/progressotel/collector-config/"
)

// built is a factory and the module it comes from.
type built[F component.Factory] struct {
	f      F
	module string
}

func from[F component.Factory](f F, module string) built[F] { return built[F]{f, module} }

// factories returns the factory map of bs and the modules of its types.
func factories[F component.Factory](bs ...built[F]) (map[component.Type]F, map[component.Type]string, error) {
	fs := make([]F, len(bs))
	mods := map[component.Type]string{}
	for i, b := range bs {
		fs[i], mods[b.f.Type()] = b.f, b.module
	}
	m, err := otelcol.MakeFactoryMap(fs...)
	return m, mods, err
}

func components() (otelcol.Factories, error) {
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	var errs [5]error
	f.Extensions, f.ExtensionModules, errs[0] = factories(
		from(filestorage.NewFactory(), cp+"extension/storage/filestorage"+contrib),
		from(bearertokenauthextension.NewFactory(), cp+"extension/bearertokenauthextension"+contrib),
		from(pprofextension.NewFactory(), cp+"extension/pprofextension"+contrib157),
		from(healthcheckextension.NewFactory(), cp+"extension/healthcheckextension"+contrib),
		from(admissionextension.NewFactory(), local+"admissionextension v0.0.0"),
	)
	f.Receivers, f.ReceiverModules, errs[1] = factories(
		from(otlpreceiver.NewFactory(), cc+"receiver/otlpreceiver"+core),
	)
	f.Exporters, f.ExporterModules, errs[2] = factories(
		from(debugexporter.NewFactory(), cc+"exporter/debugexporter"+core),
		from(fileexporter.NewFactory(), cp+"exporter/fileexporter"+contrib),
		// kafkasasl.go: a refused SASL login is named in the log
		from(withSASLProbe(kafkaexporter.NewFactory()), cp+"exporter/kafkaexporter"+contrib),
		from(loadbalancingexporter.NewFactory(), cp+"exporter/loadbalancingexporter"+contrib),
		from(otlpexporter.NewFactory(), cc+"exporter/otlpexporter"+core),
		from(otlphttpexporter.NewFactory(), cc+"exporter/otlphttpexporter"+core),
	)
	f.Processors, f.ProcessorModules, errs[3] = factories(
		from(batchprocessor.NewFactory(), cc+"processor/batchprocessor"+core),
		from[processor.Factory](memorylimiterprocessor.NewFactory(), cc+"processor/memorylimiterprocessor"+core), // an xprocessor.Factory
		from(filterprocessor.NewFactory(), cp+"processor/filterprocessor"+contrib),
		from(redactionprocessor.NewFactory(), cp+"processor/redactionprocessor"+contrib),
		from(tncoprocessor.NewFactory(), local+"tncoprocessor v0.0.0"),
	)
	f.Connectors, f.ConnectorModules, errs[4] = factories(
		from(routingconnector.NewFactory(), cp+"connector/routingconnector"+contrib157),
	)
	if err := errors.Join(errs[:]...); err != nil {
		return otelcol.Factories{}, err
	}
	return f, nil
}

func providers() []confmap.ProviderFactory {
	return []confmap.ProviderFactory{envprovider.NewFactory(), fileprovider.NewFactory(), yamlprovider.NewFactory()}
}

func providerModules() map[string]string {
	return map[string]string{
		"env":  cc + "confmap/provider/envprovider" + confmod,
		"file": cc + "confmap/provider/fileprovider" + confmod,
		"yaml": cc + "confmap/provider/yamlprovider" + confmod,
	}
}
