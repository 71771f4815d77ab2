package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/internal/testkit/tmuxtest"
)

// TestDemoInTmux runs `make demo-terraform` in a real terminal, a tmux
// pane: a real OpenTofu apply and destroy, two operations one after the
// other, each drawn as a tree with its N-of-M bar from the plan, within
// the pane's bounds, also after it shrinks mid-run; at the end each
// operation's final header stays, with the progress it reached.
func TestDemoInTmux(t *testing.T) {
	root := testutil.RepoRoot(t)
	testutil.RequireTool(t, filepath.Join(root, "bin", "tofu"), "make tofu builds it") // what make demo-terraform runs
	pane := tmuxtest.Start(t, root, 120, 30, "make --no-print-directory demo-terraform")
	resized, sawBar := false, false
	last := pane.Wait(5*time.Minute, func(lines []string) {
		area := pane.CheckLiveArea(t, lines)
		for _, row := range area {
			if strings.Contains(row, " resources  ") && strings.Contains(row, "%") {
				sawBar = true
			}
		}
		if len(area) > 0 && !resized && strings.Contains(area[0], "Uninstall") {
			pane.Resize(70, 14) // shrink during the second operation
			resized = true
		}
	})
	if status, _ := tmuxtest.Exited(last); status != 0 {
		t.Fatalf("make demo-terraform exited with %d:\n%s", status, tmuxtest.Dump(last))
	}
	history := strings.Join(pane.History(), "\n")
	for _, want := range []string{
		"✓ Install  resource::webapp::1.0/webapp-demo  trace ",
		"6/6 resources",
		"✓ Uninstall  resource::webapp::1.0/webapp-demo",
		"✓ create terraform_data.network", // a collapsed part, printed once above
		"terraform-driver: Install: 6 of 6 resource operations done",
	} {
		if !strings.Contains(history, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, history)
		}
	}
	if n := strings.Count(history, "✓ create terraform_data.network"); n != 1 {
		t.Errorf("the collapsed line printed %d times", n)
	}
	if !sawBar {
		t.Error("the N-of-M bar never showed in the live area")
	}
	if strings.Contains(strings.Join(last, "\n"), "running ") {
		t.Errorf("a live area is left after the end:\n%s", tmuxtest.Dump(last))
	}
}
