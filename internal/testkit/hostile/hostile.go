// Package hostile builds the hostile and careless details that the
// limits, the redactor and the no-panic guarantee are tested and
// benchmarked against: the classes of input that once broke the hard
// limits, as named shapes and as a generator driven by fuzz input.
package hostile

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// KeyMarker sits in the body of every private key this package builds:
// output that contains it (or its base64 text) leaked a key.
const KeyMarker = "K3yM4teR1aLxQ"

// The private keys, each with KeyMarker in its body.
var (
	Cert    = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUpublic\n-----END CERTIFICATE-----\n"
	RSAKey  = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + KeyMarker + "\nAQAB\n-----END RSA PRIVATE KEY-----\n"
	ECParam = "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"
	ECKey   = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE" + KeyMarker + "\n-----END EC PRIVATE KEY-----\n"
	PubKey  = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0public\n-----END PUBLIC KEY-----\n"
	PGPKey  = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYB" + KeyMarker + "\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----\n"
	SSHKey  = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1" + KeyMarker + "\n-----END OPENSSH PRIVATE KEY-----\n"
	PPKKey  = "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\nAAAA" + KeyMarker + "\nPrivate-MAC: 1f2e\n"
)

// KeyForms returns private keys in every form they reach details in,
// by name.
func KeyForms() []Shape {
	return []Shape{
		{"first PEM block", RSAKey, false},
		{"certificate then key", Cert + RSAKey, false},
		{"EC PARAMETERS then key", ECParam + ECKey, false},
		{"public key then private key", PubKey + RSAKey, false},
		{"PGP private key block", PGPKey, false},
		{"OpenSSH key after text", "id_ed25519:\n" + SSHKey, false},
		{"PuTTY key file", PPKKey, false},
		{"bytes (os.ReadFile)", []byte(Cert + RSAKey), false},
		{"base64 text (Kubernetes Secret data)", base64.StdEncoding.EncodeToString([]byte(Cert + ECKey)), false},
		{"lines in a []string (stdout_lines)", strings.Split(Cert+RSAKey+"done", "\n"), false},
		{"lines in a nested slice", []any{"cat key.pem", strings.Split(ECParam+ECKey, "\n")}, false},
		{"value in a map", map[string]any{"content": SSHKey}, false},
		{"map inside a slice", []any{map[string]any{"item": PGPKey}}, false},
		{"bytes inside a slice", [][]byte{[]byte(RSAKey)}, false},
		{"error text", keyError{}, false},
	}
}

// keyError is an error whose text holds a key.
type keyError struct{}

func (keyError) Error() string { return "loading " + RSAKey + " failed" }

// Leaks reports whether s holds key material built by this package: the
// marker, or the marker's base64 text at any byte offset.
func Leaks(s string) bool {
	if strings.Contains(s, KeyMarker) {
		return true
	}
	for _, pre := range []string{"", "x", "xy"} {
		enc := base64.StdEncoding.EncodeToString([]byte(pre + KeyMarker))
		if strings.Contains(s, enc[4:len(enc)-4]) {
			return true
		}
	}
	return false
}

// MyErr is the classic typed nil: a nil *MyErr in an error interface.
type MyErr struct{ Msg string }

func (e *MyErr) Error() string { return e.Msg }

// NilErr returns a non-nil error interface holding a nil *MyErr.
func NilErr() error {
	var e *MyErr
	return e
}

// PanicJSON panics in MarshalJSON; PanicText in MarshalText; PanicError in
// Error.
type (
	PanicJSON  struct{ X int }
	PanicText  struct{ X int }
	PanicError struct{ X int }
	FailJSON   struct{}
	// BigJSON returns N elements from MarshalJSON.
	BigJSON struct{ N int }
	// ValueJSON has a value receiver: called through a nil *ValueJSON, the
	// method would dereference nil.
	ValueJSON struct{ S string }
)

func (PanicJSON) MarshalJSON() ([]byte, error) { panic("MarshalJSON blew up") }
func (PanicText) MarshalText() ([]byte, error) { panic("MarshalText blew up") }
func (PanicError) Error() string               { panic("Error blew up") }
func (FailJSON) MarshalJSON() ([]byte, error)  { return nil, errors.New("nope") }
func (b BigJSON) MarshalJSON() ([]byte, error) {
	elems := slices.Repeat([]string{`{"k":"` + strings.Repeat("v", 40) + `"}`}, b.N)
	return []byte("[" + strings.Join(elems, ",") + "]"), nil
}
func (v ValueJSON) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(v.S)), nil }

// TextKey is a map key type written through its MarshalText, which
// panics for BadKey.
type TextKey int

// BadKey is the TextKey whose MarshalText panics.
const BadKey TextKey = 13

func (k TextKey) MarshalText() ([]byte, error) {
	if k == BadKey {
		panic("bad key")
	}
	return []byte("t:" + strconv.Itoa(int(k))), nil
}

// Quoted has encoding/json's ",string" option on every quotable kind.
type Quoted struct {
	I  int     `json:"i,string"`
	U  uint8   `json:"u,string"`
	F  float64 `json:"f,string"`
	B  bool    `json:"b,string"`
	S  string  `json:"s,string"`
	P  *int    `json:"p,string"`
	NP *int    `json:"np,string"`
}

// NewQuoted returns a Quoted with every field set (NP nil).
func NewQuoted() Quoted {
	p := 7
	return Quoted{I: -3, U: 200, F: 1.5e-7, B: true, S: `a"<b`, P: &p}
}

// Shape is a named hostile input.
type Shape struct {
	Name    string
	Details any
	// Cut: the default limits must cut it.
	Cut bool
}

// Shapes returns the worst inputs, each built at the given
// scale (1 is the size; 10 is ten times larger, for showing that
// the cost of Record no longer grows with the input).
func Shapes(scale int) []Shape {
	nested := func(fan, levels int) any {
		var v any = "x"
		for range levels {
			v = slices.Repeat([]any{v}, fan)
		}
		return v
	}
	wide := func(n, keyLen int) map[string]any {
		m := make(map[string]any, n)
		for i := range n {
			k := strconv.Itoa(i)
			m[k+strings.Repeat("k", max(keyLen-len(k), 0))] = i
		}
		return m
	}
	facts := func(hosts, n int) []any {
		f := make(map[string]any, n)
		for j := range n {
			f["ansible_fact_"+strconv.Itoa(j)] = "value " + strconv.Itoa(j)
		}
		return slices.Repeat([]any{f}, hosts) // shared: the input is large, its memory is not
	}
	pems := slices.Repeat([]any{Cert + RSAKey}, 200*scale)
	return []Shape{
		{"key-1MiB", map[string]any{strings.Repeat("k", scale<<20): 1}, true},
		{"keys-64x100KB", wide(64, scale*100_000), true},
		{"hosts-256x1000", map[string]any{"hostvars": facts(256*scale, 1000)}, true},
		{"slices-3-deep", map[string]any{"s": nested(256, 3)}, true},
		{"slices-256x256x256", nested(256*scale, 3), true},
		{"wide-map-4000", wide(4000*scale, 8), true},
		// The widest map the work bound still lets Record sort: the
		// costliest map there is.
		{"wide-map-16000", wide(16000, 8), true},
		{"pem-values-200", map[string]any{"certs": pems}, false},
		{"marshal-json-big", map[string]any{"m": BigJSON{N: 10_000 * scale}}, true},
		{"string-10MiB", map[string]any{"s": strings.Repeat("s", scale*10<<20)}, true},
		{"bytes-10MiB", map[string]any{"b": make([]byte, scale*10<<20)}, true},
	}
}

// NaNs returns the values JSON cannot hold.
func NaNs() map[string]any {
	return map[string]any{"nan": math.NaN(), "inf": math.Inf(1), "ninf": math.Inf(-1), "f32": float32(math.Inf(1))}
}

// FromBytes builds a value from fuzz input: every byte chooses a shape or
// a size, so that a fuzzer reaches wide maps, long keys, deep and fanned
// out slices, maps inside slices, typed nils, panicking methods, private
// keys in every form, NaNs and cycles. The value's memory stays small:
// repeated children are shared, which is what makes 256³ slices cheap to
// build and expensive to encode naively.
func FromBytes(data []byte) any {
	g := &gen{data: data}
	return g.value(0)
}

type gen struct {
	data []byte
	pos  int
}

func (g *gen) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b)
}

// size is a count from 0 to about 5000, small counts likelier.
func (g *gen) size() int {
	n := g.next()
	switch g.next() % 4 {
	case 0:
		return n % 8
	case 1:
		return n
	case 2:
		return n * 4
	}
	return n * 20
}

func (g *gen) key(i int) string {
	switch g.next() % 8 {
	case 0:
		return strings.Repeat("k", g.size()*16) + strconv.Itoa(i) // long
	case 1:
		return "a.b%" + strconv.Itoa(i) // escapes
	case 2:
		return "password" + strconv.Itoa(i) // secret
	case 3:
		return "\x1b[31m" + strconv.Itoa(i) // control bytes
	}
	return "k" + strconv.Itoa(i)
}

func (g *gen) value(depth int) any {
	if depth > 12 {
		return "leaf"
	}
	switch g.next() % 22 {
	case 0:
		return strings.Repeat(string(rune('a'+g.next()%26)), g.size()*g.next()/8)
	case 1, 2:
		n := g.size()
		m := make(map[string]any, n)
		child := g.value(depth + 1)
		for i := range n {
			m[g.key(i)] = child
		}
		return m
	case 3, 4:
		n := g.size() % 600
		return slices.Repeat([]any{g.value(depth + 1)}, n)
	case 5:
		return make([]byte, g.size()*g.next())
	case 6:
		return int64(g.next()) << (g.next() % 64)
	case 7:
		return []any{math.NaN(), math.Inf(1), float32(1.5), uint64(math.MaxUint64), math.Copysign(0, -1)}[g.next()%5]
	case 8:
		return []any{nil, NilErr(), (*MyErr)(nil), map[string]any(nil), []any(nil), []string(nil), (*ValueJSON)(nil), (*Quoted)(nil)}[g.next()%8]
	case 9:
		return []any{PanicJSON{}, PanicText{}, PanicError{}, FailJSON{}, &PanicJSON{}, BigJSON{N: g.size()}, ValueJSON{S: "v"}}[g.next()%7]
	case 10, 11:
		forms := KeyForms()
		return forms[g.next()%len(forms)].Details
	case 12:
		return NewQuoted()
	case 13:
		n := g.size()
		m := make(map[string]string, n)
		for i := range n {
			m[g.key(i)] = strings.Repeat("v", g.next())
		}
		return m
	case 14:
		n := g.size() % 600
		s := make([]string, n)
		for i := range s {
			s[i] = strings.Repeat("l", g.next())
		}
		return s
	case 15:
		n := g.size()
		m := make(map[int]any, n)
		child := g.value(depth + 1)
		for i := range n {
			m[i*7919] = child
		}
		return m
	case 16:
		return map[TextKey]any{1: 1, BadKey: 2, TextKey(g.size()): 3}
	case 17:
		return []any{make(chan int), func() {}, complex(1, 2)}[g.next()%3]
	case 18:
		m := map[string]any{"name": "loop"}
		m["self"] = m
		return m
	case 19:
		type host struct {
			Name  string         `json:"name"`
			Facts map[string]any `json:"facts,omitempty"`
			Err   error          `json:"err"`
			Raw   []byte         `json:"raw,omitempty"`
			Next  *host          `json:"next"`
		}
		h := &host{Name: "h", Err: NilErr()}
		h.Next = h
		if f, ok := g.value(depth + 1).(map[string]any); ok {
			h.Facts = f
		}
		return h
	case 20:
		return fmt.Errorf("wrapped: %w", &MyErr{Msg: strings.Repeat("e", g.size())})
	}
	return g.next()
}
