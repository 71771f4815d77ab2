package admissionextension

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.opentelemetry.io/collector/extension/extensiontest"
)

func handler(t *testing.T, cfg *Config, next http.Handler) http.Handler {
	t.Helper()
	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(typ), cfg)
	if err != nil {
		t.Fatal(err)
	}
	wrap, err := ext.(extensionmiddleware.HTTPServer).GetHTTPHandler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h, err := wrap(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func post(h http.Handler, body, encoding string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/v1/logs", strings.NewReader(body))
	if encoding != "" {
		r.Header.Set("Content-Encoding", encoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// While one body holds most of the budget, a second that does not fit is
// refused at once with a retryable 503, before its body is read; once the
// first is done, the second fits. A compressed body weighs the receiver's
// body limit (its decoded size is unknown), and a body larger than the
// whole budget is admitted alone instead of never.
func TestAdmission(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	read := 0
	h := handler(t, &Config{MaxInFlightBytes: 10, MaxRequestBytes: 6}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read++
		if r.Header.Get("X-Hold") != "" {
			entered <- struct{}{}
			<-release
		}
	}))
	done := make(chan *httptest.ResponseRecorder)
	go func() {
		r := httptest.NewRequest(http.MethodPost, "/v1/logs", strings.NewReader("12345678"))
		r.Header.Set("X-Hold", "1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		done <- rec
	}()
	<-entered
	if rec := post(h, "12345678", ""); rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("second body over the budget: %d %q, want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := post(h, "12", ""); rec.Code != http.StatusOK {
		t.Errorf("a small body that fits: %d", rec.Code)
	}
	if rec := post(h, "1", "gzip"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("a compressed body (weighs 6 of the 2 left): %d, want 503", rec.Code)
	}
	close(release)
	if rec := <-done; rec.Code != http.StatusOK {
		t.Errorf("the first body: %d", rec.Code)
	}
	if rec := post(h, "12345678", ""); rec.Code != http.StatusOK {
		t.Errorf("after the first is done: %d", rec.Code)
	}
	if rec := post(h, strings.Repeat("x", 50), ""); rec.Code != http.StatusOK {
		t.Errorf("a body over the whole budget, alone: %d", rec.Code)
	}
	if read != 4 {
		t.Errorf("the handler read %d bodies, want 4 (refused ones never reach it)", read)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (&Config{MaxInFlightBytes: 0, MaxRequestBytes: 1}).Validate(); err == nil {
		t.Error("a zero budget is valid")
	}
	if err := NewFactory().CreateDefaultConfig().(*Config).Validate(); err != nil {
		t.Error(err)
	}
}
