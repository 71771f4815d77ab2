package main

import (
	"os"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"gopkg.in/yaml.v3"
)

// manifest is the part of an OCB builder-config.yaml that names the
// distribution and its modules.
type manifest struct {
	Dist struct {
		Name    string `yaml:"name"`
		Version string `yaml:"version"`
		Module  string `yaml:"module"`
	} `yaml:"dist"`
	Receivers  []module `yaml:"receivers"`
	Processors []module `yaml:"processors"`
	Exporters  []module `yaml:"exporters"`
	Extensions []module `yaml:"extensions"`
	Connectors []module `yaml:"connectors"`
	Providers  []module `yaml:"providers"`
	Telemetry  module   `yaml:"telemetry"`
}

type module struct {
	GoMod  string `yaml:"gomod"`
	Import string `yaml:"import"`
}

func readManifest(t *testing.T) manifest {
	t.Helper()
	b, err := os.ReadFile("../builder-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(false)
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func gomods(ms []module) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.GoMod)
	}
	sort.Strings(out)
	return out
}

func values(m map[component.Type]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// distinct counts the factories of a factory map, not their names: a
// factory registers under its deprecated type name too (otlp for
// otlp_grpc, otlphttp for otlp_http).
func distinct[F interface{ Type() component.Type }](m map[component.Type]F) int {
	n := 0
	for name, f := range m {
		if f.Type() == name {
			n++
		}
	}
	return n
}

// The manifest and main.go/components.go describe the same distribution:
// the same components from the same modules at the same versions, and
// go.mod requires each of them at that version.
func TestManifestMatchesDistribution(t *testing.T) {
	m := readManifest(t)
	f, err := components()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind     string
		manifest []module
		built    map[component.Type]string
		n        int
	}{
		{"receivers", m.Receivers, f.ReceiverModules, distinct(f.Receivers)},
		{"processors", m.Processors, f.ProcessorModules, distinct(f.Processors)},
		{"exporters", m.Exporters, f.ExporterModules, distinct(f.Exporters)},
		{"extensions", m.Extensions, f.ExtensionModules, distinct(f.Extensions)},
		{"connectors", m.Connectors, f.ConnectorModules, distinct(f.Connectors)},
	} {
		want, got := gomods(c.manifest), values(c.built)
		if strings.Join(want, "\n") != strings.Join(got, "\n") || c.n != len(want) {
			t.Errorf("%s: manifest has\n  %s\nmain.go has (%d factories)\n  %s", c.kind,
				strings.Join(want, "\n  "), c.n, strings.Join(got, "\n  "))
		}
	}
	var provs []string
	for _, v := range providerModules() {
		provs = append(provs, v)
	}
	sort.Strings(provs)
	if want := gomods(m.Providers); strings.Join(want, "\n") != strings.Join(provs, "\n") || len(providers()) != len(want) {
		t.Errorf("providers: manifest has %v, main.go has %v", want, provs)
	}
	if m.Dist.Name != distName || m.Dist.Version != distVersion {
		t.Errorf("dist: manifest %s %s, main.go %s %s", m.Dist.Name, m.Dist.Version, distName, distVersion)
	}
	if m.Telemetry.Import != "go.opentelemetry.io/collector/service/telemetry/otelconftelemetry" {
		t.Errorf("telemetry import %q is not the one main.go uses", m.Telemetry.Import)
	}

	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "module "+m.Dist.Module+"\n") {
		t.Errorf("go.mod is not module %s", m.Dist.Module)
	}
	all := append(append(append(append(append(append([]module{}, m.Receivers...), m.Processors...), m.Exporters...),
		m.Extensions...), m.Connectors...), m.Providers...)
	all = append(all, m.Telemetry)
	for _, mod := range all {
		if !strings.Contains(string(gomod), "\t"+mod.GoMod+"\n") && !strings.Contains(string(gomod), "\t"+mod.GoMod+" //") {
			t.Errorf("go.mod does not require %s", mod.GoMod)
		}
	}
}
