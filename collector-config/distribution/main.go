// Command subagent-otelcol is subagent-otel's own OpenTelemetry Collector
// distribution: exactly the components collector-config/*.yaml use, every
// collector module at one core/contrib release (go.mod). It exists so the
// stack runs without Docker (scripts/stack.mjs builds it into a per-user
// cache); the compose file runs the contrib image of the same release.
package main

import (
	"log"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"
)

// version is the core/contrib release every collector module in go.mod is at.
const version = "0.161.0"

func main() {
	settings := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "subagent-otelcol",
			Description: "subagent-otel's OpenTelemetry Collector distribution",
			Version:     version,
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					envprovider.NewFactory(),
					fileprovider.NewFactory(),
					yamlprovider.NewFactory(),
				},
				// ${VAR} without a scheme reads the environment, as in the
				// contrib image.
				DefaultScheme: "env",
			},
		},
	}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		log.Fatal(err)
	}
}
