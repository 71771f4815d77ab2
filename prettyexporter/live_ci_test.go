package prettyexporter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// ciRun exports recs in batches of n to a CI-format exporter of the given CI (GITLAB_CI=true or
// GITHUB_ACTIONS=true in its environment), the clock at each batch's last record, and returns what
// it wrote and the step summary (GitHub's).
func ciRun(t *testing.T, gitlab bool, recs []step, n int) (out, summary string) {
	t.Helper()
	summaryFile := filepath.Join(t.TempDir(), "summary.md")
	if gitlab {
		t.Setenv("GITLAB_CI", "true")
		t.Setenv("GITHUB_ACTIONS", "")
		t.Setenv("GITHUB_STEP_SUMMARY", "")
	} else {
		t.Setenv("GITLAB_CI", "")
		t.Setenv("GITHUB_ACTIONS", "true")
		t.Setenv("GITHUB_STEP_SUMMARY", summaryFile)
	}
	var buf testutil.SyncBuffer
	clock := &fakeClock{t: recs[0].when()}
	e, _ := NewLive(WithWriter(&buf), WithLiveMode(LiveCI), WithColor(ColorNever), WithoutTime(), withClock(clock))
	for i := 0; i < len(recs); i += n {
		batch := recs[i:min(i+n, len(recs))]
		clock.set(batch[len(batch)-1].when())
		if err := e.feed(batch); err != nil {
			t.Fatal(err)
		}
		if err := e.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(summaryFile)
	return buf.String(), string(b)
}

func TestCIDebug(t *testing.T) {
	for _, gitlab := range []bool{false, true} {
		out, sum := ciRun(t, gitlab, ansibleRecords(t, "../ansible/testdata/streams/site.jsonl"), 7)
		t.Logf("%s\n----\n%s", out, sum)
		out, sum = ciRun(t, gitlab, terraformRecords(t, "../terraform/testdata/streams/tofu-apply-failing.jsonl", "Install"), 7)
		t.Logf("%s\n----\n%s", out, sum)
	}
}
