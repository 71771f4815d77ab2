package view

import (
	"context"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
)

// PlainSpans returns a span exporter that prints one line per span received, then hands the spans
// to next. Plain lines are made from records; a sender of spans alone (otel-cli, a tool's own
// spans) would print nothing but its failures without it.
func PlainSpans(next sdktrace.SpanExporter, notice func(string)) sdktrace.SpanExporter {
	return plainSpans{next, notice}
}

type plainSpans struct {
	sdktrace.SpanExporter
	notice func(string)
}

func (p plainSpans) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	for _, s := range spans {
		p.notice(spanLine(s))
	}
	return p.SpanExporter.ExportSpans(ctx, spans)
}

// spanLine is `span "name" outcome duration trace=… span=… parent=…`, with the status's
// description after a failure.
func spanLine(s sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	b.WriteString("span ")
	b.WriteString(strconv.Quote(truncate(s.Name(), 200)))
	st := s.Status()
	word := "ok"
	if st.Code == codes.Error {
		word = outcome.Failed
	}
	for _, kv := range s.Attributes() {
		if string(kv.Key) == outcome.Key && kv.Value.AsString() != "" {
			word = kv.Value.AsString()
		}
	}
	if strings.Trim(word, "abcdefghijklmnopqrstuvwxyz_") != "" || len(word) > 40 {
		word = strconv.Quote(truncate(word, 40)) // not one of progress.outcome's words
	}
	b.WriteString(" " + word)
	if d := s.EndTime().Sub(s.StartTime()); d >= 0 && !s.StartTime().IsZero() {
		b.WriteString(" " + d.Round(time.Millisecond).String())
	}
	b.WriteString(" trace=" + s.SpanContext().TraceID().String()[:8])
	b.WriteString(" span=" + s.SpanContext().SpanID().String()[:8])
	if p := s.Parent(); p.SpanID().IsValid() {
		b.WriteString(" parent=" + p.SpanID().String()[:8])
	}
	if st.Code == codes.Error && st.Description != "" {
		b.WriteString(": " + strconv.Quote(truncate(st.Description, 300)))
	}
	return b.String()
}
