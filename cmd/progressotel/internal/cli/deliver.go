package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"

	otelprop "go.opentelemetry.io/otel/propagation"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

// sendTimeout bounds the wait for the enclosing run's answer. The run
// answers once the Recorder took the event, which never waits for I/O.
const sendTimeout = 10 * time.Second

// deliver records m, which has been checked: through the enclosing run when
// there is one, else with an exporter of its own, else nowhere with a
// warning. Only invalid input fails (exit status 2): a telemetry problem is
// reported on stderr and never changes the exit status, since a driver
// must not fail because its telemetry did.
func deliver(ctx context.Context, m *message, o *commonOptions, stderr io.Writer) Status {
	ctx = contextFromEnv(ctx, o.tracectx)
	if path := os.Getenv(handoff.EnvSocket); path != "" {
		carrier := otelprop.MapCarrier{}
		propagation.Default().Inject(ctx, carrier)
		m.Carrier = carrier
		req, err := json.Marshal(m)
		if err != nil {
			warnf(stderr, "%v", err)
			return Status{Code: ExitUsage}
		}
		err = handoff.Send(path, req, sendTimeout)
		switch {
		case err == nil:
			return Status{}
		case errors.Is(err, handoff.ErrInvalid):
			warnf(stderr, "%v", err)
			return Status{Code: ExitUsage}
		case errors.Is(err, handoff.ErrUnreachable):
			// The run has ended (a process it left behind emits):
			// record it like an emit outside a run.
			warnf(stderr, "the enclosing run is gone (%s): exporting directly", path)
		case errors.Is(err, handoff.ErrNoAnswer):
			// It may have been recorded: exporting it too could
			// duplicate it.
			warnf(stderr, "the enclosing run did not answer (%v): the event may be lost", err)
			return Status{}
		default:
			// Refused for another reason than the input (another
			// version of progressotel runs the run).
			warnf(stderr, "the enclosing run did not take the event (%v): exporting directly", err)
		}
	}

	switch exporters() {
	case exportersUnset:
		warnf(stderr, "%s", noExporterWarning)
		return Status{}
	case exportersDisabled:
		return Status{}
	}
	// Outside a run, each emit is a process of its own: a sequence number
	// would restart at 1 every time, so there is none (a run numbers its
	// emits).
	t, err := setupTelemetry(ctx, o, true, false, stderr, otelbridge.WithRecorderOptions(progress.WithoutSequence()))
	if err != nil {
		warnf(stderr, "telemetry: %v: nothing is exported", err)
		return Status{}
	}
	if err := m.record(ctx, progress.Default(), m.Envelope); err != nil {
		// Checked before: only a Recorder that disagrees gets here.
		warnf(stderr, "%v", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	t.shutdown(sctx, stderr)
	return Status{}
}
