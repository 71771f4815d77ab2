// Package handoff carries the events of `progressotel emit` and
// `progressotel transition` to the enclosing `progressotel run` over a unix
// socket, so that a loop of thousands of emits costs a connection each
// instead of an exporter each, and so that the run numbers them in its own
// sequence.
//
// The run listens (Listen) on a socket in a private directory (mode 0700,
// the socket 0600) and puts its path in the child's environment
// (EnvSocket). An emit sends one request per connection, a JSON object on
// one line, and waits for the run's answer (Send), so that emits from a
// loop keep their order. On Linux the run also checks each peer's user id
// (SO_PEERCRED): another user can neither reach the socket nor, through a
// descriptor passed to it, be heard on it. On other systems the directory's
// permissions do that alone.
package handoff
