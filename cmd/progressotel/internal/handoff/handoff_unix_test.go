//go:build unix

package handoff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Another user is refused even when the directory and the socket were
// opened up (here on purpose; a wrong umask or ACL could do it): the peer
// credentials say who connected. Needs root, to run a process as nobody.
func TestAnotherUserIsRefused(t *testing.T) {
	if os.Getenv("HANDOFF_CONNECT") != "" {
		return // the helper process runs TestMain's branch instead
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to start a process as another user")
	}
	if !peerChecked {
		t.Skip("peer credentials are checked on Linux only")
	}
	handled := false
	s := startServer(t, func(context.Context, []byte) error { handled = true; return nil })
	if err := os.Chmod(filepath.Dir(s.Path()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.Path(), 0o666); err != nil {
		t.Fatal(err)
	}
	// The test binary, where user nobody can run it.
	bin := filepath.Join(t.TempDir(), "handoff.test")
	copyFile(t, os.Args[0], bin)
	for _, d := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), filepath.Dir(filepath.Dir(filepath.Dir(bin)))} {
		_ = os.Chmod(d, 0o755)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), "HANDOFF_CONNECT="+s.Path())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "unanswered") {
		t.Fatalf("another user's request was answered: %s", out)
	}
	if handled || s.Stats().Refused != 1 {
		t.Fatalf("handled=%v stats %+v", handled, s.Stats())
	}
}

func TestMain(m *testing.M) {
	if path := os.Getenv("HANDOFF_CONNECT"); path != "" {
		err := Send(path, []byte(`{"forged":true}`), 5*time.Second)
		switch {
		case errors.Is(err, ErrNoAnswer):
			fmt.Println("unanswered:", err)
		default:
			fmt.Println("answered:", err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
