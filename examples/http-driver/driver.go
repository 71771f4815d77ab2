package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/examples/internal/demo"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

// ExecutePath is the Ignition driver API endpoint that starts a lifecycle
// transition.
const ExecutePath = "/api/driver/lifecycle/execute"

// maxRequestBody bounds the request body, of which only a few fields
// are read.
const maxRequestBody = 1 << 20

// executeRequest is the field of Ignition's lifecycle execute request
// that this example uses.
type executeRequest struct {
	LifecycleName string `json:"lifecycleName"`
}

type executeResponse struct {
	RequestID string `json:"requestId"`
}

// driver answers execute requests with 202 and runs the transition in the
// background, the way Ignition drivers do.
type driver struct {
	log       *slog.Logger
	steps     int
	stepDelay time.Duration
	ansible   bool // run the demo's real playbook, not the simulated steps
	// life ends the background transitions (a running playbook is
	// stopped) when the server gives up waiting for them.
	life context.Context
	runs sync.WaitGroup // background transitions still running
	// beforeRun, when set, runs before each transition (tests hold it
	// until the handler has returned).
	beforeRun func()
}

// handler is the driver's HTTP API. The propagation middleware puts the
// request's trace context, baggage and tracectx into r.Context() before
// execute runs; otelhttp around it adds a server span (a child of the
// incoming traceparent) without the two getting in each other's way.
func (d *driver) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+ExecutePath, d.execute)
	return otelhttp.NewHandler(propagation.HTTPMiddleware(mux), "http-driver")
}

func (d *driver) execute(w http.ResponseWriter, r *http.Request) {
	var req executeRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err == nil && len(body) > 0 {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		d.log.WarnContext(r.Context(), "bad execute request", "error", err.Error())
		http.Error(w, `{"localizedMessage":"request body is not a JSON object"}`, http.StatusBadRequest)
		return
	}
	if req.LifecycleName == "" {
		req.LifecycleName = "Install"
	}

	requestID := newRequestID()
	// The driver's own id travels with the request's tracectx, so every
	// record of this transition carries tracectx.driverrequestid too. A
	// failure here only loses that stamp: the request goes on.
	ctx, err := propagation.WithValue(r.Context(), "driverrequestid", requestID)
	if err != nil {
		d.log.WarnContext(r.Context(), "driverrequestid not stamped", "error", err.Error())
	}

	// The request's context ends with the handler: keep its values (span,
	// tracectx, baggage), not its cancellation; the driver's life ends it.
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	life := d.life
	if life == nil {
		life = context.Background()
	}
	stop := context.AfterFunc(life, cancel)
	d.runs.Add(1)
	go func() {
		defer d.runs.Done()
		defer stop()
		defer cancel()
		if d.beforeRun != nil {
			d.beforeRun()
		}
		d.run(bg, req.LifecycleName)
	}()

	d.log.InfoContext(ctx, "execute accepted", "requestId", requestID, "lifecycle", req.LifecycleName)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(executeResponse{RequestID: requestID})
}

// run is the transition, correlated with the request's trace and stamped
// with its tracectx: the real playbook, or the simulated steps.
func (d *driver) run(ctx context.Context, lifecycle string) {
	ctx, span := otel.Tracer("github.com/progressotel/progressotel/examples/http-driver").
		Start(ctx, "lifecycle "+lifecycle, trace.WithSpanKind(trace.SpanKindInternal))
	defer span.End()
	if d.ansible {
		d.runPlaybook(ctx, lifecycle)
		return
	}

	start := time.Now()
	d.record(ctx, progress.OperationStarted(lifecycle))
	for i := 1; i <= d.steps; i++ {
		if d.stepDelay > 0 {
			time.Sleep(d.stepDelay)
		}
		d.log.DebugContext(ctx, "step done", "step", i)
		d.record(ctx, progress.Progress(int64(i), int64(d.steps), "steps"))
	}
	d.record(ctx, progress.OperationCompleted(lifecycle, time.Since(start)))
	d.log.InfoContext(ctx, "transition finished", "lifecycle", lifecycle)
}

// runPlaybook runs the demo's playbook with the real Ansible: its events
// carry the request's trace and tracectx, because ctx does.
func (d *driver) runPlaybook(ctx context.Context, lifecycle string) {
	res, err := demo.Run(ctx, "http-driver-", adapter.WithOperation(lifecycle),
		adapter.WithEnvelope(progress.Envelope{Component: component}), adapter.WithLogger(d.log))
	if err != nil {
		d.log.ErrorContext(ctx, "transition failed", "lifecycle", lifecycle, "error", err.Error())
		return
	}
	d.log.InfoContext(ctx, "transition finished", "lifecycle", lifecycle, "events", res.Events)
}

// component names the driver on its events.
var component = progress.Component{Name: "http-driver", Version: "0.1.0"}

func (d *driver) record(ctx context.Context, evt progress.Event) {
	evt.Component = component
	if err := progress.Record(ctx, evt); err != nil {
		// A bad event is the driver's bug; it never stops the transition.
		d.log.ErrorContext(ctx, "progress event rejected", "error", err.Error())
	}
}

// wait waits for the background transitions until ctx ends.
func (d *driver) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { d.runs.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("background transitions still running: " + ctx.Err().Error())
	}
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails on supported platforms
	return hex.EncodeToString(b[:])
}
