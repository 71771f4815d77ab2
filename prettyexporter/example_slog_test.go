package prettyexporter_test

import (
	"context"
	"log/slog"
	"os"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/prettyexporter"
)

// Ordinary logs, here from log/slog through the otelslog bridge, share the
// output with progress events: the body, then the attributes, slog groups
// as dotted keys. Control characters in values are escaped.
func ExampleNew_slog() {
	exp, _ := prettyexporter.New(
		prettyexporter.WithWriter(os.Stdout),
		prettyexporter.WithColor(prettyexporter.ColorNever),
		prettyexporter.WithoutTime(),
	)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	defer lp.Shutdown(context.Background())

	logger := slog.New(otelslog.NewHandler("example.com/driver", otelslog.WithLoggerProvider(lp)))
	logger.Info("inventory loaded", "hosts", 2, slog.Group("source", "path", "/etc/ansible/hosts"))
	logger.Warn("odd host name", "host", "web-1\x1b[2J")
	// Output:
	// INF inventory loaded  hosts=2 source.path=/etc/ansible/hosts
	// WRN odd host name  host="web-1\x1b[2J"
}
