package main

import (
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
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/transformprocessor"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/progressotel/progressotel/collector-config/admissionextension"
	"github.com/progressotel/progressotel/collector-config/tncoprocessor"
)

// Module versions, as in the manifest. The Collector reports them in
// `otelcol-progress components`.
const (
	core    = " v0.152.0"
	contrib = " v0.152.0"
	confmod = " v1.58.0"
	cp      = "github.com/open-telemetry/opentelemetry-collector-contrib/"
	// This repository's own component, built from its directory.
	tncoModule = "github.com/progressotel/progressotel/collector-config/tncoprocessor v0.0.0"
	// The admission middleware of the receivers, from its directory.
	admissionModule = "github.com/progressotel/progressotel/collector-config/admissionextension v0.0.0"
)

func components() (otelcol.Factories, error) {
	var err error
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}

	if f.Extensions, err = otelcol.MakeFactoryMap[extension.Factory](
		filestorage.NewFactory(),
		bearertokenauthextension.NewFactory(),
		pprofextension.NewFactory(),
		healthcheckextension.NewFactory(),
		admissionextension.NewFactory(),
	); err != nil {
		return otelcol.Factories{}, err
	}
	f.ExtensionModules = map[component.Type]string{
		filestorage.NewFactory().Type():              cp + "extension/storage/filestorage" + contrib,
		bearertokenauthextension.NewFactory().Type(): cp + "extension/bearertokenauthextension" + contrib,
		pprofextension.NewFactory().Type():           cp + "extension/pprofextension" + contrib,
		healthcheckextension.NewFactory().Type():     cp + "extension/healthcheckextension" + contrib,
		admissionextension.NewFactory().Type():       admissionModule,
	}

	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](
		otlpreceiver.NewFactory(),
	); err != nil {
		return otelcol.Factories{}, err
	}
	f.ReceiverModules = map[component.Type]string{
		otlpreceiver.NewFactory().Type(): "go.opentelemetry.io/collector/receiver/otlpreceiver" + core,
	}

	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		debugexporter.NewFactory(),
		fileexporter.NewFactory(),
		withSASLProbe(kafkaexporter.NewFactory()), // kafkasasl.go: a refused SASL login is named in the log
		loadbalancingexporter.NewFactory(),
		otlpexporter.NewFactory(),
		otlphttpexporter.NewFactory(),
	); err != nil {
		return otelcol.Factories{}, err
	}
	f.ExporterModules = map[component.Type]string{
		debugexporter.NewFactory().Type():         "go.opentelemetry.io/collector/exporter/debugexporter" + core,
		fileexporter.NewFactory().Type():          cp + "exporter/fileexporter" + contrib,
		kafkaexporter.NewFactory().Type():         cp + "exporter/kafkaexporter" + contrib,
		loadbalancingexporter.NewFactory().Type(): cp + "exporter/loadbalancingexporter" + contrib,
		otlpexporter.NewFactory().Type():          "go.opentelemetry.io/collector/exporter/otlpexporter" + core,
		otlphttpexporter.NewFactory().Type():      "go.opentelemetry.io/collector/exporter/otlphttpexporter" + core,
	}

	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](
		batchprocessor.NewFactory(),
		memorylimiterprocessor.NewFactory(),
		filterprocessor.NewFactory(),
		transformprocessor.NewFactory(),
		redactionprocessor.NewFactory(),
		tncoprocessor.NewFactory(),
	); err != nil {
		return otelcol.Factories{}, err
	}
	f.ProcessorModules = map[component.Type]string{
		batchprocessor.NewFactory().Type():         "go.opentelemetry.io/collector/processor/batchprocessor" + core,
		memorylimiterprocessor.NewFactory().Type(): "go.opentelemetry.io/collector/processor/memorylimiterprocessor" + core,
		filterprocessor.NewFactory().Type():        cp + "processor/filterprocessor" + contrib,
		transformprocessor.NewFactory().Type():     cp + "processor/transformprocessor" + contrib,
		redactionprocessor.NewFactory().Type():     cp + "processor/redactionprocessor" + contrib,
		tncoprocessor.NewFactory().Type():          tncoModule,
	}

	if f.Connectors, err = otelcol.MakeFactoryMap[connector.Factory](
		routingconnector.NewFactory(),
	); err != nil {
		return otelcol.Factories{}, err
	}
	f.ConnectorModules = map[component.Type]string{
		routingconnector.NewFactory().Type(): cp + "connector/routingconnector" + contrib,
	}
	return f, nil
}

func providers() []confmap.ProviderFactory {
	return []confmap.ProviderFactory{
		envprovider.NewFactory(),
		fileprovider.NewFactory(),
		yamlprovider.NewFactory(),
	}
}

func providerModules() map[string]string {
	return map[string]string{
		"env":  "go.opentelemetry.io/collector/confmap/provider/envprovider" + confmod,
		"file": "go.opentelemetry.io/collector/confmap/provider/fileprovider" + confmod,
		"yaml": "go.opentelemetry.io/collector/confmap/provider/yamlprovider" + confmod,
	}
}
