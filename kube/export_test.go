package kube

import "github.com/progressotel/progressotel/adapter"

// WithWatchTimeout makes the API server end each watch after seconds, so
// that a test sees the Applier resume; ended is called each time.
func WithWatchTimeout(seconds int64, ended func()) ApplyOption {
	return adapter.Own(func(c *applyConfig) { c.watchTimeout, c.watchEnded = seconds, ended })
}
