package otelbridge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
)

// A driver's main: Setup once, record inside spans, Shutdown with a
// deadline, and read what was lost. In a driver the exporters come from the
// environment (OTEL_LOGS_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT) and JSON
// lines go to stderr; here they go to a buffer, to print a few fields.
func ExampleSetup() {
	var out bytes.Buffer
	tel, err := otelbridge.Setup(context.Background(),
		// The driver's default name; OTEL_SERVICE_NAME overrides it.
		otelbridge.WithResource(resource.NewSchemaless(attribute.String("service.name", "example-driver"))),
		otelbridge.WithExporters(otelbridge.ExporterJSON), otelbridge.WithWriter(&out))
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, span := otel.Tracer("example-driver").Start(context.Background(), "Install")
	_ = progress.Record(ctx, progress.Event{Type: "ansible/TaskStarted", Details: map[string]any{"taskName": "install nginx"}})
	_ = progress.Record(ctx, progress.Progress(1, 3, "tasks"))
	span.End()

	// Shutdown flushes what was recorded; past its deadline it says what
	// it could not flush (*sdkparts.LostRecordsError).
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tel.Shutdown(sctx); err != nil {
		fmt.Println(err)
	}
	s := tel.Stats()
	fmt.Printf("exported %d, lost %d\n", s.Exported, s.Dropped)

	lines := bufio.NewScanner(&out)
	for lines.Scan() {
		var line struct {
			ProgressEventType string         `json:"progressEventType"`
			Details           map[string]any `json:"details"`
		}
		if err := json.Unmarshal(lines.Bytes(), &line); err != nil {
			fmt.Println(err)
		}
		fmt.Println(line.ProgressEventType, line.Details)
	}
	// Output:
	// exported 2, lost 0
	// ansible/TaskStarted map[taskName:install nginx]
	// common/Progress map[completed:1 total:3 unit:tasks]
}
