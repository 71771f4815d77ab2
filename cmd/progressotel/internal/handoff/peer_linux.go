package handoff

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// peerChecked: the peer's user is checked.
const peerChecked = true

// samePeer reports whether the peer of conn runs as this process's user,
// from the credentials the kernel recorded when it connected.
func samePeer(conn *net.UnixConn) bool {
	raw, err := conn.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return false
	}
	return int(cred.Uid) == os.Getuid()
}
