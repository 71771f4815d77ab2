// Package procctl is the one home of the process control that the tool
// adapters (ansible, terraform) and the progressotel command share: a
// child started in a process group of its own with its stdout on a pipe,
// stopped with a signal, a grace period, then SIGKILL to its whole group
// and to what it left behind, and its exit status read as a shell reports
// it (128+n for a death by signal n).
//
// Why a process group: a tool such as ansible-runner or OpenTofu starts
// helpers of its own (ansible-playbook, provider plugins, provisioner
// commands). Signalling the group reaches them and nothing of the driver;
// SIGKILL to the tool alone would leave them running.
//
// A driver that dies without stopping its child (SIGKILL, a crash): on
// Linux the child gets Stop.Signal from the kernel (PR_SET_PDEATHSIG);
// elsewhere it runs on. Its stdout is then a broken pipe: a tool that
// writes there before it has stopped dies of SIGPIPE.
package procctl
