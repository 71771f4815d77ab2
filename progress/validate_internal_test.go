package progress

import (
	"errors"
	"testing"
)

// FuzzParseType: the hot path's table-driven check (validType) accepts
// exactly what the explaining parser (parseType) accepts, and what they
// accept has the documented shape.
func FuzzParseType(f *testing.F) {
	for _, s := range []string{"ansible/TaskStartedOnHost", "a/B", "A/b", "a/b/c", "a_-9/Z.z-_9", "/x", "x/", "", "a/.b", "a-/b", "9a/b", "common/Progress"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := parseType(s)
		if fast := validType(s); fast != (err == nil) {
			t.Fatalf("type %q: validType %v, parseType %v", s, fast, err)
		}
		if err != nil {
			var ve *ValidationError
			if !errors.Is(err, ErrInvalidEvent) || !errors.As(err, &ve) || ve.Field != "type" {
				t.Fatalf("type %q: error %v is not a *ValidationError on type", s, err)
			}
			return
		}
		if len(s) > maxTypeLen {
			t.Fatalf("accepted %d bytes", len(s))
		}
		slashes := 0
		for i := 0; i < len(s); i++ {
			if s[i] < 0x21 || s[i] > 0x7e {
				t.Fatalf("accepted non-printable byte in %q", s)
			}
			if s[i] == '/' {
				slashes++
			}
		}
		if slashes != 1 {
			t.Fatalf("accepted %q with %d slashes", s, slashes)
		}
	})
}
