package progress_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/progress"
)

func TestParseType(t *testing.T) {
	for _, ok := range []string{"ansible/TaskStarted", "kubernetes/ObjectCreated", "common/Progress", "my-driver/step_2.done"} {
		if _, _, err := progress.ParseType(ok); err != nil {
			t.Errorf("ParseType(%q) = %v, want nil", ok, err)
		}
	}
	g, n, _ := progress.ParseType("ansible/TaskStarted")
	if g != "ansible" || n != "TaskStarted" {
		t.Fatalf("split = %q %q", g, n)
	}
	cases := map[string]string{
		"":                      "empty",
		"TaskStarted":           "missing '/'",
		"a/b/c":                 "more than one '/'",
		"/TaskStarted":          "empty group",
		"ansible/":              "empty name",
		"Ansible/TaskStarted":   "lower-case letter",
		"ansible/1Task":         "start with a letter",
		"ans ible/TaskStarted":  "not allowed in group",
		"ansible/Task\x1bStart": "not allowed in name",
		"ansible/" + strings.Repeat("x", progress.MaxTypeLen): "longer than",
	}
	for in, rule := range cases {
		_, _, err := progress.ParseType(in)
		if err == nil {
			t.Errorf("ParseType(%q): want error", in)
			continue
		}
		if !errors.Is(err, progress.ErrInvalidEvent) {
			t.Errorf("ParseType(%q): error %v does not wrap ErrInvalidEvent", in, err)
		}
		var te *progress.EventTypeError
		if !errors.As(err, &te) || !strings.Contains(te.Rule, rule) {
			t.Errorf("ParseType(%q): rule = %v, want it to mention %q", in, err, rule)
		}
		if len(in) <= 64 && !strings.Contains(err.Error(), strconv.Quote(in)) {
			t.Errorf("ParseType(%q): message %q does not name the value", in, err)
		}
	}
}

func TestValidateStream(t *testing.T) {
	for _, ok := range []string{progress.StreamProvisioning, progress.StreamLifecycle, "health"} {
		if err := progress.ValidateStream(ok); err != nil {
			t.Errorf("ValidateStream(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Health", "he alth", "details", "tenant", strings.Repeat("a", 64), "a/b"} {
		if err := progress.ValidateStream(bad); !errors.Is(err, progress.ErrInvalidEvent) {
			t.Errorf("ValidateStream(%q) = %v, want ErrInvalidEvent", bad, err)
		}
	}
}

func FuzzParseType(f *testing.F) {
	for _, s := range []string{"ansible/TaskStarted", "", "/", "a/b/c", "A/b", "common/Progress"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, n, err := progress.ParseType(s)
		if err != nil {
			if !errors.Is(err, progress.ErrInvalidEvent) {
				t.Fatalf("error does not wrap ErrInvalidEvent: %v", err)
			}
			return
		}
		if g+"/"+n != s || g == "" || n == "" || len(s) > progress.MaxTypeLen {
			t.Fatalf("accepted %q as %q/%q", s, g, n)
		}
		for i := 0; i < len(s); i++ {
			if s[i] < 0x21 || s[i] > 0x7e {
				t.Fatalf("accepted non-printable byte in %q", s)
			}
		}
	})
}
