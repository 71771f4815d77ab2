package otelbridge

import (
	"io"
	"log"
	"os"
	"sync"

	"github.com/go-logr/stdr"
	"go.opentelemetry.io/otel"
)

// While a live view runs, everything the process writes to the terminal must go through it (its
// Output), or the text lands under the live area, which the next frame overwrites, and the screen
// is left with stale rows. The program's own text is its to route (write through
// Telemetry.Output); what the standard library and the OpenTelemetry SDK write on their own is
// routed here, from Setup until Telemetry.Shutdown has printed the view's last screen:
//
//   - the standard log package's default logger (log.SetOutput). slog's default handler writes
//     through it, as long as the program did not replace it, and so does the OpenTelemetry error
//     handler's default (a handler the program set with otel.SetErrorHandler is its own);
//   - the SDK's internal logger (otel.SetLogger), whose default writes to os.Stderr directly: a
//     logger of the same kind (stdr, verbosity 0) is installed once, which writes through the
//     live view while one runs and to os.Stderr otherwise. It replaces a logger the program set
//     before Setup; one set after Setup wins.
//
// What a program writes to os.Stderr itself cannot be caught.

// terminalRoute is where the internal logger writes while a live view runs: nil when none does.
var terminalRoute struct {
	sync.RWMutex
	w io.Writer
}

// routedWriter writes to the live view while one runs, else to fallback.
type routedWriter struct{ fallback io.Writer }

func (r *routedWriter) Write(b []byte) (int, error) {
	terminalRoute.RLock()
	w := terminalRoute.w
	terminalRoute.RUnlock()
	if w == nil {
		w = r.fallback
	}
	return w.Write(b)
}

// installLogger sets the SDK's internal logger once: as its default, but through the route.
var installLogger = sync.OnceFunc(func() {
	otel.SetLogger(stdr.New(log.New(&routedWriter{os.Stderr}, "", log.LstdFlags|log.Lshortfile)))
})

// routeTerminal sends the log package's and the SDK's own text to out, the live view's Output,
// until the function it returns is called (Telemetry.Shutdown, after the view's last screen).
func routeTerminal(out io.Writer) (restore func()) {
	installLogger()
	terminalRoute.Lock()
	terminalRoute.w = out
	terminalRoute.Unlock()
	prevLog := log.Writer()
	routed := &routedWriter{prevLog}
	log.SetOutput(routed)
	return sync.OnceFunc(func() {
		terminalRoute.Lock()
		if terminalRoute.w == out {
			terminalRoute.w = nil
		}
		terminalRoute.Unlock()
		if w, ok := log.Writer().(*routedWriter); ok && w == routed {
			log.SetOutput(prevLog)
		}
	})
}
