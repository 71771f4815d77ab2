package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

const (
	rsaKey  = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretbody\n-----END RSA PRIVATE KEY-----\n"
	cert    = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"
	pubKey  = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n-----END PUBLIC KEY-----\n"
	ecParam = "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"
	ecKey   = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIsecretbody\n-----END EC PRIVATE KEY-----\n"
	pgpKey  = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGsecretbody\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----\n"
	sshKey  = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEsecretbody\n-----END OPENSSH PRIVATE KEY-----\n"
	ppkKey  = "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 2\nAAAAC3Nz\nPrivate-Lines: 1\nAAAAsecretbody\nPrivate-MAC: 1f2e\n"
)

var rules = New(true, "password")

// TestKeyMaterialAnywhere: every class of issue 12, defect 2.
func TestKeyMaterialAnywhere(t *testing.T) {
	secret := map[string]string{
		"first block":               rsaKey,
		"certificate then key":      cert + rsaKey,
		"ecparam -genkey output":    ecParam + ecKey,
		"public key then private":   pubKey + rsaKey,
		"PGP private key block":     pgpKey,
		"OpenSSH key after text":    "id_ed25519 contents:\n" + sshKey,
		"PKCS#8":                    "-----BEGIN PRIVATE KEY-----\nMIIEvgIBADANsecret\n-----END PRIVATE KEY-----",
		"encrypted PKCS#8":          "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBO\n",
		"header cut short":          "-----BEGIN RSA PRIVATE KEY\nMIIEow (cut)",
		"key in YAML":               "config:\n  key: |\n    " + rsaKey,
		"three blocks, key last":    cert + cert + pubKey + ecKey,
		"PuTTY key file":            ppkKey,
		"base64 PEM (K8s Secret)":   base64.StdEncoding.EncodeToString([]byte(rsaKey)),
		"base64 cert+key, offset 1": base64.StdEncoding.EncodeToString([]byte("x" + cert + rsaKey)),
		"base64 offset 2":           base64.StdEncoding.EncodeToString([]byte("xy" + ecKey)),
		"base64 after other text":   "tls.key: " + base64.StdEncoding.EncodeToString([]byte(sshKey)),
	}
	for name, v := range secret {
		if !rules.SecretValue(v) {
			t.Errorf("%s: not found in %q", name, v)
		}
		if !rules.SecretBytes([]byte(v)) {
			t.Errorf("%s: not found as bytes", name)
		}
	}
	public := map[string]string{
		"certificate":         cert,
		"public key":          pubKey,
		"EC parameters":       ecParam,
		"certificate chain":   cert + cert,
		"prose":               "private key rotation scheduled for the PRIVATE KEY store",
		"base64 certificate":  base64.StdEncoding.EncodeToString([]byte(cert)),
		"base64 of prose":     base64.StdEncoding.EncodeToString([]byte("-----BEGIN nothing here")),
		"begin, then key far": "-----BEGIN CERTIFICATE-----\n" + strings.Repeat("A", 200) + " PRIVATE KEY",
		"empty":               "",
	}
	for name, v := range public {
		if rules.SecretValue(v) {
			t.Errorf("%s: %q reported secret", name, v)
		}
	}
	var off Rules
	if off.SecretValue(rsaKey) || off.SecretKey("password") || off.Active() {
		t.Error("the zero Rules redact nothing")
	}
	if noValues := New(false, "x"); noValues.SecretValue(rsaKey) {
		t.Error("keyMaterial off: values are not searched")
	}
}

// TestKeyFileLines: a key file split into lines in a slice, as Ansible's
// stdout_lines has it: every line from the header to the end line is
// secret, the lines around it are not.
func TestKeyFileLines(t *testing.T) {
	for name, text := range map[string]string{"PEM": cert + rsaKey + "done", "PuTTY": "ok\n" + ppkKey + "done"} {
		lines := strings.Split(text, "\n")
		in := false
		var kept []string
		for _, l := range lines {
			if !rules.SecretLine(&in, l) {
				kept = append(kept, l)
			}
		}
		all := strings.Join(kept, "\n")
		if strings.Contains(all, "secretbody") || strings.Contains(all, "PRIVATE KEY") || strings.Contains(all, "Private-Lines") {
			t.Errorf("%s: key lines survived: %q", name, kept)
		}
		if !strings.Contains(all, "done") {
			t.Errorf("%s: the line after the key was redacted too: %q", name, kept)
		}
		if in {
			t.Errorf("%s: still inside a key after its end line", name)
		}
	}
	in := false
	if !rules.SecretLine(&in, rsaKey) || in {
		t.Error("a whole key in one line is secret and closes itself")
	}
}

func TestSecretKey(t *testing.T) {
	r := New(true, "password", "api_key")
	for k, want := range map[string]bool{"password": true, "DB_PASSWORD": true, "Api-Key": true, "apikeys": true, "user": false, "pass": false} {
		if got := r.SecretKey(k); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", k, got, want)
		}
	}
	w := r.With("token")
	if !w.SecretKey("authToken") || r.SecretKey("authToken") {
		t.Error("With extends a copy only")
	}
}

// TestSecretKeyAllocatesNothing: the key check runs for every map entry
// inside a slice, so it must stay allocation-free.
func TestSecretKeyAllocatesNothing(t *testing.T) {
	r := New(true, "password", "token")
	if n := testing.AllocsPerRun(100, func() { r.SecretKey("ansible_fact_Default-IPv4.Address") }); n != 0 {
		t.Errorf("SecretKey allocates %v times", n)
	}
	if !r.SecretKey("DB_Pass-Word") || r.SecretKey(strings.Repeat("X_", 200)) {
		t.Error("normalising in a buffer changed the result")
	}
	if !r.SecretKey(strings.Repeat("X_", 200) + "Token") {
		t.Error("a key longer than the buffer is checked too")
	}
}

// FuzzRedact: a private key placed in any text, in any of the forms the
// library writes or reads (string, bytes, base64 at any offset), is
// found; the search never panics and stays linear.
func FuzzRedact(f *testing.F) {
	f.Add("", uint8(0), uint8(0))
	f.Add("prefix text ", uint8(1), uint8(0))
	f.Add(cert, uint8(2), uint8(1))
	f.Add(ecParam, uint8(3), uint8(2))
	f.Add(pubKey+"-----BEGIN ", uint8(4), uint8(3))
	f.Add("LS0tLS1CRUdJTi", uint8(5), uint8(4))
	keys := []string{rsaKey, ecKey, pgpKey, sshKey, ppkKey, "-----BEGIN PRIVATE KEY-----\nMIIE"}
	f.Fuzz(func(t *testing.T, prefix string, which, form uint8) {
		key := keys[int(which)%len(keys)]
		if rules.SecretValue(prefix) {
			return // the prefix alone already holds a key
		}
		var v string
		switch form % 4 {
		case 0:
			v = prefix + key
		case 1:
			v = prefix + key + prefix
		case 2:
			if strings.HasPrefix(key, "PuTTY") {
				return // PuTTY files are not base64-armoured
			}
			v = base64.StdEncoding.EncodeToString([]byte(prefix + key))
		case 3:
			v = prefix + "\n" + key[:len(key)/2] // cut in the middle
			if !strings.Contains(key[:len(key)/2], "PRIVATE KEY") && !strings.Contains(key[:len(key)/2], "PuTTY") {
				return
			}
		}
		if !rules.SecretValue(v) {
			t.Fatalf("key not found in %q", v)
		}
		if !rules.SecretBytes([]byte(v)) {
			t.Fatalf("key not found in bytes %q", v)
		}
		in := false
		_ = rules.SecretLine(&in, prefix)
	})
}

// BenchmarkSecretValue is the search every detail string of 20 bytes or
// more pays.
func BenchmarkSecretValue(b *testing.B) {
	for name, v := range map[string]string{
		"short":  "Install nginx on web-1 now",
		"medium": strings.Repeat("task output line, nothing secret here. ", 4),
		"long":   strings.Repeat("x", 4096),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if rules.SecretValue(v) {
					b.Fatal("secret")
				}
			}
		})
	}
}
