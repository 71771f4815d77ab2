package handoff

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// startServer listens and serves with h until the test ends.
func startServer(t *testing.T, h Handler) *Server {
	t.Helper()
	s, err := Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), h) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

func TestSendIsAnsweredAfterTheHandlerRan(t *testing.T) {
	var mu sync.Mutex
	var got []string
	s := startServer(t, func(_ context.Context, req []byte) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(req))
		return nil
	})
	for i := range 20 {
		if err := Send(s.Path(), fmt.Appendf(nil, `{"n":%d}`, i), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// Each Send returns after its request was handled: the order is kept.
	for i, r := range got {
		if want := fmt.Sprintf(`{"n":%d}`, i); r != want {
			t.Fatalf("request %d = %s, want %s", i, r, want)
		}
	}
	if st := s.Stats(); st.Accepted != 20 || st.Failed+st.Invalid+st.Refused != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRejectionsReachTheSender(t *testing.T) {
	s := startServer(t, func(_ context.Context, req []byte) error {
		switch string(req) {
		case "bad":
			return fmt.Errorf("progressEventType %q: %w", "x", ErrInvalid)
		case "fail":
			return errors.New("the run is shutting down")
		}
		return nil
	})
	err := Send(s.Path(), []byte("bad"), 5*time.Second)
	var rej *RejectedError
	if !errors.As(err, &rej) || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `progressEventType "x"`) {
		t.Fatalf("invalid request: %v", err)
	}
	err = Send(s.Path(), []byte("fail"), 5*time.Second)
	if !errors.As(err, &rej) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrUnreachable) {
		t.Fatalf("failed request: %v", err)
	}
	if st := s.Stats(); st.Invalid != 1 || st.Failed != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestOversizedRequestIsRefusedUnhandled(t *testing.T) {
	called := false
	s := startServer(t, func(context.Context, []byte) error { called = true; return nil })
	err := Send(s.Path(), []byte(strings.Repeat("x", MaxRequestBytes+1)), 5*time.Second)
	// The server answers with an error, or closes while the client is
	// still writing; both are fine, acceptance is not.
	var rej *RejectedError
	if !errors.As(err, &rej) && !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("oversized request: %v", err)
	}
	if called {
		t.Fatal("the handler saw an oversized request")
	}
	// A request at the limit goes through.
	if err := Send(s.Path(), []byte(strings.Repeat("x", MaxRequestBytes)), 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestPrivateDirectoryAndCleanup(t *testing.T) {
	s, err := Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(context.Background(), func(context.Context, []byte) error { return nil })
	dir := filepath.Dir(s.Path())
	for path, want := range map[string]os.FileMode{dir: 0o700, s.Path(): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("directory left behind: %v", err)
	}
	if err := Send(s.Path(), []byte("{}"), time.Second); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Send after Close: %v, want ErrUnreachable", err)
	}
}

func TestSilentPeerDoesNotHoldTheServer(t *testing.T) {
	s := startServer(t, func(context.Context, []byte) error { return nil })
	// Peers that connect and say nothing take no more than their
	// own slot: others are still answered.
	for range 3 {
		c, err := net.Dial("unix", s.Path())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	if err := Send(s.Path(), []byte("{}"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
}
