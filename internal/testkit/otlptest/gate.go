package otlptest

import (
	"context"
	"sync"
)

// gate holds requests, as a collector that accepts the connection and
// never answers, between hold and release.
type gate struct {
	mu sync.Mutex
	ch chan struct{} // when set, requests wait until it is closed
}

func (g *gate) hold() {
	g.mu.Lock()
	g.ch = make(chan struct{})
	g.mu.Unlock()
}

// release lets held and later requests through.
func (g *gate) release() {
	g.mu.Lock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
	g.mu.Unlock()
}

// wait returns nil at once when the gate is open, else when it opens, or
// ctx's error when the client gives up first.
func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
