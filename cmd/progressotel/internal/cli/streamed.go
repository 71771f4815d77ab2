package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// streamedRun runs a tool whose stdout is a stream of events, one per
// line: each line goes to tap, which shows it to the user and watches it,
// then to decode, the adapter package's Stream function, which records the
// events live and returns when the stream ends.
type streamedRun struct {
	inv    *Invocation
	cmd    *exec.Cmd // Stdout is set by run
	decode func(ctx context.Context, r io.Reader)
	tap    func(line []byte)
	// ended, when set, runs once the tool has exited and its output has
	// ended, before decode sees the end: it may cancel decode's context
	// with a cause (the tool died without saying so in its stream).
	ended func(st Status, cancel context.CancelCauseFunc)
	// maxLine bounds a line given to tap whole; longer ones are passed on
	// in pieces.
	maxLine int
}

// run starts the tool under the run's signal rules and returns its status;
// the error is set when it could not be started (decode has then seen an
// empty stream, cut short with the reason).
func (s *streamedRun) run(ctx context.Context) (Status, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return Status{}, err
	}
	defer pr.Close()
	s.cmd.Stdout = pw

	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	streamR, streamW := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.decode(dctx, streamR)
		_, _ = io.Copy(io.Discard, streamR) // never leave the pump blocked
	}()

	if err := s.inv.Start(s.cmd); err != nil {
		pw.Close()
		cancel(err)
		streamW.Close()
		wg.Wait()
		return startFailure(err), err
	}
	pw.Close()

	exited := make(chan Status, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.pump(pr, streamW)
		st := <-exited
		if s.ended != nil {
			s.ended(st, cancel)
		}
		streamW.Close()
	}()
	st := s.inv.Wait(s.cmd)
	exited <- st
	// A process the tool left behind may hold its stdout open.
	_ = pr.SetReadDeadline(time.Now().Add(linesDrain))
	wg.Wait()
	return st, nil
}

// pump copies r to w line by line, giving each line to tap first.
func (s *streamedRun) pump(r io.Reader, w io.Writer) {
	max := s.maxLine
	if max <= 0 {
		max = 8 << 20
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) && len(line) < max {
			continue
		}
		if len(line) > 0 {
			if s.tap != nil {
				s.tap(line)
			}
			_, _ = w.Write(line)
			line = line[:0]
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}
