// Package handoff carries the events of `progressotel emit` and
// `progressotel transition` to the enclosing `progressotel run` over a unix
// socket: a connection per emit instead of an exporter, and one sequence.
//
// The run listens (Listen) on a socket in a private directory (0700, the
// socket 0600) whose path is in the child's environment (EnvSocket). An
// emit sends one request per connection, a JSON object on one line, and
// waits for the answer (Send), so that a loop's emits keep their order. On
// Linux the run also checks each peer's user id (SO_PEERCRED); elsewhere
// the directory's permissions alone keep other users out.
package handoff

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// EnvSocket is the environment variable that holds the socket's path in
// the environment of a run's child.
const EnvSocket = "PROGRESSOTEL_SOCKET"

// MaxRequestBytes bounds one request (progress.Limits bound an event's
// details well below it).
const MaxRequestBytes = 1 << 20

const (
	// connTimeout bounds one connection, from accept to answer: a peer that
	// says nothing holds nothing for long.
	connTimeout = 10 * time.Second
	// maxConcurrent bounds the connections served at once; more wait in
	// the listener's backlog (their emits wait, nothing is dropped).
	maxConcurrent = 64
	socketName    = "emit.sock" // in the private directory
)

// Handler handles one request. A nil error is answered as accepted. An
// error wrapping ErrInvalid is answered as invalid input; any other as a
// failure.
type Handler func(ctx context.Context, request []byte) error

// ErrInvalid marks a request the handler rejects as invalid input.
var ErrInvalid = errors.New("invalid request")

// Stats counts what a Server saw.
type Stats struct {
	Accepted int64 // requests answered as accepted
	Invalid  int64 // requests answered as invalid
	Failed   int64 // requests answered as failed, unreadable or oversized
	Refused  int64 // connections closed unheard: another user's, or unreadable credentials
}

// Server receives requests on a unix socket in a private directory.
type Server struct {
	dir, path string
	ln        *net.UnixListener
	sem       chan struct{}
	wg        sync.WaitGroup

	accepted, invalid, failed, refused atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

// Listen creates a private directory under base (the system's temporary
// directory when base is empty, or /tmp when that would make the socket's
// path too long for a unix socket address) and listens on a socket in it.
// Close removes both.
func Listen(base string) (_ *Server, err error) {
	if base == "" {
		base = os.TempDir()
		// sun_path holds 108 bytes on Linux, 104 on the BSDs.
		if len(base)+len("/progressotel-0123456789/"+socketName) > 100 {
			base = "/tmp"
		}
	}
	dir, err := os.MkdirTemp(base, "progressotel-")
	if err != nil {
		return nil, fmt.Errorf("handoff: private directory: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	// MkdirTemp creates it 0700; say so explicitly, whatever the umask.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("handoff: private directory: %w", err)
	}
	path := filepath.Join(dir, socketName)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("handoff: listen: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("handoff: socket permissions: %w", err)
	}
	return &Server{dir: dir, path: path, ln: ln, sem: make(chan struct{}, maxConcurrent)}, nil
}

// Path is the socket's path, the value of EnvSocket.
func (s *Server) Path() string { return s.path }

// Serve answers requests with h until Close. It returns nil after Close.
func (s *Server) Serve(ctx context.Context, h Handler) error {
	for {
		conn, err := s.ln.AcceptUnix()
		if errors.Is(err, net.ErrClosed) {
			return nil
		} else if err != nil {
			time.Sleep(10 * time.Millisecond) // EMFILE and the like: no spinning
			continue
		}
		if !samePeer(conn) {
			s.refused.Add(1)
			_ = conn.Close()
			continue
		}
		s.sem <- struct{}{}
		s.wg.Go(func() {
			defer func() { <-s.sem }()
			s.serveConn(ctx, conn, h)
		})
	}
}

func (s *Server) serveConn(ctx context.Context, conn *net.UnixConn, h Handler) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(connTimeout))
	line, err := readLine(bufio.NewReaderSize(conn, 4096), MaxRequestBytes)
	if err != nil {
		s.failed.Add(1)
		_ = json.NewEncoder(conn).Encode(answer{Error: "handoff: " + err.Error()})
		return
	}
	var a answer
	switch err := h(ctx, line); {
	case err == nil:
		s.accepted.Add(1)
		a.OK = true
	case errors.Is(err, ErrInvalid):
		s.invalid.Add(1)
		a.Error, a.Invalid = err.Error(), true
	default:
		s.failed.Add(1)
		a.Error = err.Error()
	}
	_ = json.NewEncoder(conn).Encode(a)
}

// Stats returns the counts so far.
func (s *Server) Stats() Stats {
	return Stats{Accepted: s.accepted.Load(), Invalid: s.invalid.Load(), Failed: s.failed.Load(), Refused: s.refused.Load()}
}

// Close stops listening, waits for the requests being handled (each is
// bounded by a connection timeout) and removes the directory. Emits after
// Close find no socket and export directly. A nil *Server (Listen failed)
// has nothing to close.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	s.closeOnce.Do(func() {
		err := s.ln.Close()
		s.wg.Wait()
		s.closeErr = errors.Join(err, os.RemoveAll(s.dir))
	})
	return s.closeErr
}

// answer is the server's reply: one JSON object on one line.
type answer struct {
	OK      bool   `json:"ok,omitempty"`
	Error   string `json:"error,omitempty"`
	Invalid bool   `json:"invalid,omitempty"`
}

var errTooLong = errors.New("request longer than the limit")

// readLine reads one line (without its newline) of at most max bytes; a
// last line without a newline is accepted.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			return nil, errTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// RejectedError is the run's answer to a request it did not accept.
type RejectedError struct {
	Message string
	Invalid bool // invalid input, as opposed to a failure of the run
}

func (e *RejectedError) Error() string { return e.Message }

// Unwrap lets errors.Is(err, ErrInvalid) tell invalid input.
func (e *RejectedError) Unwrap() error {
	if e.Invalid {
		return ErrInvalid
	}
	return nil
}

var (
	// ErrUnreachable wraps the error of a request that was not sent: no
	// socket, or a refused connection (the run has ended).
	ErrUnreachable = errors.New("handoff: the run is not reachable")
	// ErrNoAnswer wraps the error of a request that was sent, or partly,
	// and not answered in time: the run may have recorded it.
	ErrNoAnswer = errors.New("handoff: no answer from the run")
)

// Send sends one request (a JSON object, without a newline) to the run
// listening on path and waits, at most timeout, for its answer: nil when
// the run accepted it, else a *RejectedError, or an error wrapping
// ErrUnreachable or ErrNoAnswer.
func Send(path string, request []byte, timeout time.Duration) error {
	conn, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(append(request, '\n')); err != nil {
		return fmt.Errorf("%w: %w", ErrNoAnswer, err)
	}
	var a answer
	if err := json.NewDecoder(io.LimitReader(conn, 64<<10)).Decode(&a); err != nil {
		return fmt.Errorf("%w: %w", ErrNoAnswer, err)
	}
	if !a.OK {
		return &RejectedError{Message: a.Error, Invalid: a.Invalid}
	}
	return nil
}
