// Package procctl is the one home of the process control that the tool
// adapters and the progressotel command share: a child started in a
// process group of its own with its stdout on a pipe, stopped with a
// signal, a grace period, then SIGKILL to its whole group and to what it
// left behind, and its exit status read as a shell reports it.
//
// A process group, because a tool such as ansible-runner or OpenTofu starts
// helpers (ansible-playbook, provider plugins, provisioners): signalling the
// group reaches them and nothing of the driver. A driver that dies without
// stopping its child: on Linux the child gets Stop.Signal from the kernel
// (PR_SET_PDEATHSIG); elsewhere it runs on, its stdout a broken pipe.
package procctl
