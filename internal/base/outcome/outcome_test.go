package outcome

import "testing"

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		own      string
		children []string
		want     string
	}{
		{"", nil, OK},
		{"", []string{Skipped, Skipped}, Skipped},
		{"", []string{Skipped, OK}, OK},
		{"", []string{OK, Changed, Skipped}, Changed},
		{"", []string{Changed, Ignored}, Changed},
		{"", []string{Rescued, Ignored, OK}, Rescued},
		{"", []string{Ignored, Skipped}, Ignored},
		{"", []string{Unreachable, Failed}, Failed},
		{"", []string{Failed, Cancelled}, Failed},
		{"", []string{Cancelled, Changed}, Cancelled},
		{Failed, []string{Cancelled}, Failed},
		{Changed, []string{OK}, Changed},
		{OK, []string{Skipped}, OK},
		{Failed, []string{Changed}, Failed},
		{Changed, []string{Ignored}, Changed},
		{OK, []string{Rescued}, Rescued},
	} {
		if got := Of(tc.own, tc.children...); got != tc.want {
			t.Errorf("Of(%q, %v) = %q, want %q", tc.own, tc.children, got, tc.want)
		}
	}
}
