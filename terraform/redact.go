package terraform

import (
	"cmp"
	"slices"
	"strings"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// MinSensitiveValueLen is the shortest sensitive value that is replaced
// (see WithSensitiveValues): shorter ones ("1", "yes") occur everywhere by
// chance, and replacing them would garble every line and protect nothing.
const MinSensitiveValueLen = 4

// scrubber applies what only this adapter knows, the exact sensitive
// values the driver gave, before text leaves the process; every other
// secret of free text is the Redactor's, which Record applies to every
// event and text to the rest. line follows a private key printed one line
// at a time across a provisioner's output (Redactor.Line). text and value
// are safe for concurrent use; line is the decoder goroutine's.
type scrubber struct {
	redactor *progress.Redactor
	values   *strings.Replacer // nil without sensitive values
	inKey    map[string]bool   // provisioner streams inside a private key block
}

func newScrubber(r *progress.Redactor, sensitive []string) *scrubber {
	s := &scrubber{redactor: r, inKey: map[string]bool{}}
	vals := slices.DeleteFunc(slices.Clone(sensitive), func(v string) bool {
		return len(v) < MinSensitiveValueLen
	})
	// Longest first, so that a value containing another is replaced whole:
	// strings.Replacer tries the old strings in argument order.
	slices.SortFunc(vals, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	if vals = slices.Compact(vals); len(vals) > 0 {
		pairs := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			pairs = append(pairs, v, wire.Redacted)
		}
		s.values = strings.NewReplacer(pairs...)
	}
	return s
}

// value replaces the sensitive values in v: for identifiers, and text
// that only an event carries (Record redacts the rest).
func (s *scrubber) value(v string) string {
	if s.values == nil || v == "" {
		return v
	}
	return s.values.Replace(v)
}

// text redacts free text that leaves the process other than through
// Record (a Result field, an error, a span status, a log line).
func (s *scrubber) text(v string) string {
	return s.redactor.Value(s.value(v))
}

// line redacts one line of a provisioner's output; stream names the
// provisioner run, so that a private key block is followed across its
// lines.
func (s *scrubber) line(stream, v string) string {
	v = s.value(v)
	inKey := s.inKey[stream]
	out := s.redactor.Line(&inKey, v)
	if inKey {
		s.inKey[stream] = true
	} else {
		delete(s.inKey, stream)
	}
	return out
}

// endStream forgets the state of a provisioner run.
func (s *scrubber) endStream(stream string) { delete(s.inKey, stream) }
