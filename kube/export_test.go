package kube

// WithWatchTimeout makes the API server end each watch after seconds, so
// that a test sees the Applier resume; ended is called each time.
func WithWatchTimeout(seconds int64, ended func()) ApplyOption {
	return func(c *applyConfig) { c.watchTimeout, c.watchEnded = seconds, ended }
}
