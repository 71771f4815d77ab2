package handoff

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

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
	line, err := readLine(bufio.NewReader(conn), 64<<10)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoAnswer, err)
	}
	var a answer
	if err := json.Unmarshal(line, &a); err != nil {
		return fmt.Errorf("%w: unreadable answer: %w", ErrNoAnswer, err)
	}
	if !a.OK {
		return &RejectedError{Message: a.Error, Invalid: a.Invalid}
	}
	return nil
}
