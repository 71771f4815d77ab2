package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

// steps runs Shapes on v and returns the scan's loop iterations.
func steps(r *Rules, v string) int {
	sc := scanner{r: r, s: v}
	sc.run()
	return sc.steps
}

// maxStepsPerByte is the linearity bound the scan is held to: every byte
// is visited by the main loop once, and by a bounded number of the
// shapes' own loops (key read-back, value, token tail, JWT segments).
const maxStepsPerByte = 8

func checkLinear(t *testing.T, name, v string) {
	t.Helper()
	r := New(true, "password", "secret", "token", "apikey", "authorization")
	if n := steps(&r, v); n > maxStepsPerByte*len(v)+64 {
		t.Errorf("%s: %d steps for %d bytes (%.1f per byte)", name, n, len(v), float64(n)/float64(len(v)))
	}
}

// TestShapesLinearOnPathologicalInput: inputs built to make a naive
// scanner quadratic (every separator reading back over the same key,
// every value searching to the end for a quote that never comes, every
// prefix reading the same tail) cost a constant number of steps per byte,
// at 64 KiB and at 1 MiB alike.
func TestShapesLinearOnPathologicalInput(t *testing.T) {
	patterns := map[string]string{
		"separators only":            "=:",
		"key then many separators":   "token===::",
		"unclosed quoted values":     `token="a `,
		"unclosed context quotes":    `"token: a `,
		"escaped quotes":             `\"token\":\"`,
		"long keys":                  strings.Repeat("k", 200) + "=",
		"key is":                     "token is ",
		"schemes":                    "://",
		"schemes with user":          "a://b:c",
		"user info without host":     "x://u:p",
		"prefixes without tails":     "ghp_-",
		"aws near misses":            "AKIA" + strings.Repeat("B", 15) + "a ",
		"jwt near misses":            "eyJ" + strings.Repeat("a", 9) + ".",
		"jwt segments":               "eyJaaaaaaaaaaaa.",
		"bearer without token":       "Bearer  ",
		"basic without colon":        "Basic " + base64.StdEncoding.EncodeToString([]byte("nocolonhere")) + "/",
		"spaces after separators":    "token:    ",
		"words at every byte":        "e b B x g A s",
		"pem headers":                "-----BEGIN ",
		"base64 pem starts":          "LS0tLS1CRUdJTi",
		"quote after every key":      `token"`,
		"newlines and separators":    "token=\n",
		"is without key":             " is  is ",
		"long credential run":        "Basic " + strings.Repeat("QUFB", 64),
		"mixed":                      `a=b "token": 'x https://u:p@h/ Bearer eyJ` + "\n",
		"url authority without ends": "https://" + strings.Repeat("u", 50),
		"token starts in one run":    "-eyJ",
		"flags":                      " --password-stdin -pX -u a:b",
		"commands":                   "curl mysql sshpass htpasswd -b machine x password ",
		"labels":                     "a b Key: ",
		"references":                 "token={{ token=${ token=$( token=(x token=<a b ",
		"block scalars":              "password: |\n",
		"escaped quotes in values":   `password:"a\"`,
	}
	for name, p := range patterns {
		for _, size := range []int{64 << 10, 1 << 20} {
			v := strings.Repeat(p, size/len(p)+1)[:size]
			checkLinear(t, name, v)
		}
	}
}

// FuzzShapesLinear: whatever the input, the scan costs at most
// maxStepsPerByte steps a byte (counted, not timed), never panics, and
// a second pass over its output changes nothing.
func FuzzShapesLinear(f *testing.F) {
	for _, s := range []string{
		"TOKEN=abc123", "password: hunter2", "https://user:hunter2@host/",
		`{"password":"x"}`, "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
		"ghp_R4nd0mT0kenValueForTests0123456789", "AKIAREDACTCORPUS0123", "the token is x",
		`\"secret\":\"v\"`, "Basic ZGVwbG95OnB3cHdwdw==",
	} {
		f.Add(s, uint16(1))
	}
	r := New(true, "password", "secret", "token", "apikey", "authorization")
	f.Fuzz(func(t *testing.T, unit string, reps uint16) {
		if unit == "" {
			return
		}
		// The unit repeated: repetition is where superlinear work shows.
		v := strings.Repeat(unit, int(reps%512)+1)
		if len(v) > 1<<20 {
			v = v[:1<<20]
		}
		if n := steps(&r, v); n > maxStepsPerByte*len(v)+64 {
			t.Fatalf("%d steps for %d bytes of %q", n, len(v), unit)
		}
		out, _ := r.Shapes(v)
		// Redacting twice changes nothing more (an adapter's text that
		// Record redacts again reads the same).
		if again, _ := r.Shapes(out); again != out {
			t.Fatalf("a second pass changed %q to %q", out, again)
		}
	})
}

func TestShapes(t *testing.T) {
	r := New(true, "password", "secret", "token", "apikey", "authorization")
	const R = "[REDACTED]"
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
		{"secret: to the line end\nnext line", "secret: " + R + "\nnext line"},
		{"user=bob token=t1 id=3", "user=bob token=" + R + " id=3"},
		{"git clone https://bob:pa55@git.example/x.git", "git clone https://bob:" + R + "@git.example/x.git"},
		{"postgres://app:pw@db:5432/app and http://host:80/path", "postgres://app:" + R + "@db:5432/app and http://host:80/path"},
		{"token=", "token="},
		{"=:=:", "=:=:"},
		{"Bearer abcdefgh1234", "Bearer " + R},
		{"bearer short", "bearer short"},
		{"xghp_R4nd0mT0kenValueForTests0123456789", "xghp_R4nd0mT0kenValueForTests0123456789"},
		{"AKIAREDACTCORPUS01234", "AKIAREDACTCORPUS01234"}, // 17 characters: not an access key id
		{"(AKIAREDACTCORPUS0123)", "(" + R + ")"},
		{"the token is x1", "the token is " + R},
		{"this is fine", "this is fine"},
		{"hidden: 'no_log: true' was specified", "hidden: 'no_log: true' was specified"},
		{`{"password_set": false, "token": null}`, `{"password_set": false, "token": null}`},
	} {
		if got, _ := r.Shapes(tc.in); got != tc.want {
			t.Errorf("Shapes(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestShapesAllocatesNothingWithoutSecrets(t *testing.T) {
	r := New(true, "password", "token")
	v := "TASK [install nginx] ok: changed=1 https://host:8080/path e b B x g A"
	if n := testing.AllocsPerRun(100, func() { r.Shapes(v) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// BenchmarkShapes: the cost per KiB of text scanned (b.SetBytes).
func BenchmarkShapes(b *testing.B) {
	r := New(true, "password", "passwd", "passphrase", "secret", "token", "apikey", "privatekey",
		"authorization", "credential", "accesskey", "cookie", "clientsecret", "sessionkey", "nolog")
	line := "TASK [deploy : render config] changed: [web-1] => (item=nginx.conf) rc=0 https://repo.example/x ok\n"
	for _, tc := range []struct{ name, text string }{
		{"clean", strings.Repeat(line, 1024/len(line)+1)[:1024]},
		{"secrets", strings.Repeat(line+"export TOKEN=abc123 password: hunter2\n", 1024/len(line)+1)[:1024]},
	} {
		b.Run(tc.name+"/1KiB", func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				r.Shapes(tc.text)
			}
		})
	}
}
