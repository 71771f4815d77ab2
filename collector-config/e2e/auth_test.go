package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/progress"
)

// With PROGRESS_OTLP_BEARER_TOKEN set, a driver with a wrong token is
// refused, its events never reach Kafka, and the refusals show in the
// collector's own metrics; the right token is accepted.
func TestBearerTokenAuth(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, map[string]string{"PROGRESS_OTLP_BEARER_TOKEN": "s3cret-token"})
	col.start()

	send := func(d *driver, marker string) error {
		err := d.rec.Record(context.Background(), progress.Event{
			Type:     "ansible/PlayStarted",
			Details:  map[string]any{"playName": marker},
			Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return d.lp.ForceFlush(ctx)
	}

	wrong := newDriver(t, col.grpc, driverOpt{headers: map[string]string{"authorization": "Bearer wrong-token"}})
	none := newDriver(t, col.grpc, driverOpt{})
	if err := send(wrong, "sent-with-wrong-token"); err == nil {
		t.Log("note: the SDK reported no error for the refused export")
	}
	_ = send(none, "sent-without-token")

	if code := postLogs(t, col.http, "Bearer wrong-token"); code != http.StatusUnauthorized {
		t.Errorf("OTLP/HTTP with a wrong token: status %d, want 401", code)
	}

	right := newDriver(t, col.grpc, driverOpt{headers: map[string]string{"authorization": "Bearer s3cret-token"}})
	if err := send(right, "sent-with-right-token"); err != nil {
		t.Fatalf("export with the right token failed: %v", err)
	}
	msgs := cons.waitFor(t, 60*time.Second, "the authorised event", func(m []message) bool {
		return countMarker(m, "sent-with-right-token") == 1
	})
	if n := countMarker(msgs, "sent-with-wrong-token") + countMarker(msgs, "sent-without-token"); n != 0 {
		t.Errorf("%d refused events reached Kafka", n)
	}

	// The scheme is case-insensitive (RFC 7235): the usual spellings pass,
	// over gRPC and HTTP; a token of another case never does.
	for _, auth := range []string{"bearer s3cret-token", "BEARER s3cret-token", "Bearer s3cret-token"} {
		lower := newDriver(t, col.grpc, driverOpt{headers: map[string]string{"authorization": auth}})
		if err := send(lower, "scheme-"+auth[:6]); err != nil {
			t.Errorf("gRPC with %q refused: %v", auth, err)
		}
		if code := postLogs(t, col.http, auth); code != http.StatusOK {
			t.Errorf("HTTP with %q: status %d, want 200", auth, code)
		}
	}
	for _, auth := range []string{"Bearer S3CRET-TOKEN", "Bearer  s3cret-token", "s3cret-token", "Basic s3cret-token"} {
		if code := postLogs(t, col.http, auth); code != http.StatusUnauthorized {
			t.Errorf("HTTP with %q: status %d, want 401", auth, code)
		}
	}
	cons.waitFor(t, 60*time.Second, "the events sent with each scheme spelling", func(m []message) bool {
		return countMarker(m, "scheme-bearer") == 1 && countMarker(m, "scheme-BEARER") == 1 && countMarker(m, "scheme-Bearer") == 1
	})

	// The refusals in the collector's own telemetry: gRPC calls that ended
	// Unauthenticated (code 16) and HTTP requests answered 401.
	grpcRefused := col.metric("rpc_server_call_duration_count", map[string]string{"rpc_response_status_code": "UNAUTHENTICATED"})
	httpRefused := col.metric("http_server_request_duration_count", map[string]string{"http_response_status_code": "401"})
	if grpcRefused < 2 || httpRefused < 1 {
		t.Errorf("refusals not visible in the collector's metrics: grpc=%v (want >= 2) http=%v (want >= 1)\n%s",
			grpcRefused, httpRefused, grepLines(col.metricsText(t), "rpc_server", "http_server_request_duration"))
	}
}

// postLogs posts an empty OTLP/HTTP logs request with the given
// Authorization header and returns the status code.
func postLogs(t *testing.T, endpoint, authorization string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+endpoint+"/v1/logs", strings.NewReader(`{"resourceLogs":[]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", authorization)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func grepLines(text string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) && !strings.Contains(l, "_bucket") {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
