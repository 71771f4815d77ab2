package progress_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/log/noop"

	"github.com/progressotel/progressotel/progress"
)

func TestInvalidTypesAreRejected(t *testing.T) {
	r := progress.NewRecorder(progress.WithLoggerProvider(noop.NewLoggerProvider()))
	ctx := context.Background()
	for _, ok := range []string{"ansible/TaskStarted", "kubernetes/ObjectCreated", "common/Progress", "my-driver/step_2.done"} {
		if err := r.Record(ctx, progress.Event{Type: ok}); err != nil {
			t.Errorf("Record(%q) = %v, want nil", ok, err)
		}
	}
	cases := map[string]string{
		"":                                    "empty",
		"TaskStarted":                         "missing '/'",
		"a/b/c":                               "more than one '/'",
		"/TaskStarted":                        "empty group",
		"ansible/":                            "empty name",
		"Ansible/TaskStarted":                 "lower-case letter",
		"ansible/1Task":                       "start with a letter",
		"ans ible/TaskStarted":                "not allowed in group",
		"ansible/Task\x1bStart":               "not allowed in name",
		"ansible/" + strings.Repeat("x", 128): "longer than 128 bytes",
	}
	for in, rule := range cases {
		err := r.Record(ctx, progress.Event{Type: in})
		if !errors.Is(err, progress.ErrInvalidEvent) {
			t.Errorf("Record(%q) = %v, want an error wrapping ErrInvalidEvent", in, err)
			continue
		}
		var ve *progress.ValidationError
		if !errors.As(err, &ve) || ve.Field != "type" || !strings.Contains(ve.Rule, rule) {
			t.Errorf("Record(%q): %#v, want a *ValidationError on type mentioning %q", in, ve, rule)
		}
		if len(in) <= 64 && !strings.Contains(err.Error(), strconv.Quote(in)) {
			t.Errorf("Record(%q): message %q does not name the value", in, err)
		}
	}
}

func TestInvalidStreamsAreRejected(t *testing.T) {
	r := progress.NewRecorder(progress.WithLoggerProvider(noop.NewLoggerProvider()))
	ctx := context.Background()
	cond := progress.Condition{Status: "True"}
	for _, ok := range []string{progress.StreamProvisioning, progress.StreamLifecycle, "health"} {
		if err := r.RecordTransition(ctx, progress.Transition{Stream: ok, Condition: cond}); err != nil {
			t.Errorf("stream %q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Health", "he alth", "details", "tenant", strings.Repeat("a", 64), "a/b"} {
		err := r.RecordTransition(ctx, progress.Transition{Stream: bad, Condition: cond})
		var ve *progress.ValidationError
		if !errors.Is(err, progress.ErrInvalidEvent) || !errors.As(err, &ve) || ve.Field != "stream" {
			t.Errorf("stream %q: %v, want a *ValidationError on stream", bad, err)
		}
	}
	err := r.RecordTransition(ctx, progress.Transition{Stream: "health"})
	var ve *progress.ValidationError
	if !errors.As(err, &ve) || ve.Field != "status" || !strings.Contains(err.Error(), `"health"`) {
		t.Errorf("empty status: %v, want a *ValidationError on status naming the stream", err)
	}
	if s := r.Stats(); s.Invalid != 8 {
		t.Errorf("Stats.Invalid = %d, want 8", s.Invalid)
	}
}
