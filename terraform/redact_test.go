package terraform

import (
	"strings"
	"testing"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// TestRedactFreeText: text that leaves other than through Record (a
// Result field, an error) gets the sensitive values and the Redactor's
// policy, the same as Record gives an event.
func TestRedactFreeText(t *testing.T) {
	const R = wire.Redacted
	s := newScrubber(progress.DefaultRedactor(), []string{"hunter2-long", "hunter2", "ab"})
	for _, tc := range []struct{ in, want string }{
		{"plain output line", "plain output line"},
		{"ratio 3:4 at 12:00", "ratio 3:4 at 12:00"},
		{"export API_TOKEN=tok-abc123 && run", "export API_TOKEN=" + R + " && run"},
		{"DB_PASSWORD=x; next", "DB_PASSWORD=" + R + "; next"},
		{"password = 'a b c' rest", "password = '" + R + "' rest"},
		{`{"password": "p@ss", "user": "bob"}`, `{"password": "` + R + `", "user": "bob"}`},
		{`{"pin_token": 1234, "n": 1}`, `{"pin_token": ` + R + `, "n": 1}`},
		{`curl -H "Authorization: Bearer abc.def" https://x`, `curl -H "Authorization: Bearer ` + R + `" https://x`},
		{"secret: everything after it", "secret: " + R},
		{"user=bob token=t1 id=3", "user=bob token=" + R + " id=3"},
		{"git clone https://bob:pa55@git.example/x.git", "git clone https://bob:" + R + "@git.example/x.git"},
		{"postgres://app:pw@db:5432/app and http://host:80/path", "postgres://app:" + R + "@db:5432/app and http://host:80/path"},
		// A key that names where a token is: the value is no secret, what it
		// holds may be.
		{"token_url: https://auth.example", "token_url: https://auth.example"},
		{"token_url: https://auth.example/?access_token=t1", "token_url: https://auth.example/?access_token=" + R},
		{"connecting with hunter2-long and hunter2", "connecting with " + R + " and " + R},
		{"ab is too short to be searched", "ab is too short to be searched"},
		{"-----BEGIN RSA PRIVATE KEY-----MIIB...-----END RSA PRIVATE KEY-----", R},
		{"-----BEGIN CERTIFICATE-----", "-----BEGIN CERTIFICATE-----"},
		// A private key in a text makes the whole text secret (the
		// Redactor's rule for any value).
		{"line one\nAPI_KEY_SECRET=zz\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\nlast", R},
		{"token=", "token="},
		{"=:=:", "=:=:"},
	} {
		if got := s.text(tc.in); got != tc.want {
			t.Errorf("text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// A provisioner prints a private key one line at a time: every line from
// BEGIN to END is redacted, per provisioner run.
func TestRedactPrivateKeyAcrossLines(t *testing.T) {
	s := newScrubber(progress.DefaultRedactor(), nil)
	in := []string{"before", "-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA", "AAAAC3NzaC1lZDI1NTE5",
		"-----END OPENSSH PRIVATE KEY-----", "after"}
	var got []string
	for _, l := range in {
		got = append(got, s.line("a", l))
		// Another provisioner's lines in between are not affected.
		if out := s.line("b", "other "+l[:1]); strings.Contains(out, wire.Redacted) {
			t.Errorf("stream b redacted: %q", out)
		}
	}
	want := []string{"before", wire.Redacted, wire.Redacted, wire.Redacted, wire.Redacted, "after"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	// A key that never ends keeps its stream redacted until the run ends.
	s.line("c", "-----BEGIN EC PRIVATE KEY-----")
	if s.line("c", "MHcCAQEEI") != wire.Redacted {
		t.Error("the key's body leaked")
	}
	s.endStream("c")
	if s.line("c", "next run") != "next run" {
		t.Error("the state outlived the provisioner run")
	}
}

func TestRedactorNilRedactsOnlyValues(t *testing.T) {
	s := newScrubber(nil, []string{"s3cr3t-value"})
	if got := s.text("token=abc s3cr3t-value"); got != "token=abc "+wire.Redacted {
		t.Errorf("got %q", got)
	}
}
