package prettyexporter

import (
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/base/wireformat"
)

// The SGR sequences the pretty exporter writes, and nothing else: the fuzz test strips exactly
// these and then finds no escape byte left.
const (
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrDim    = "\x1b[2m"
	sgrRed    = "\x1b[1;31m" // bold red: ERROR, FATAL
	sgrYellow = "\x1b[1;33m" // bold yellow: WARN
	sgrGreen  = "\x1b[32m"   // INFO
	sgrCyan   = "\x1b[36m"   // the live view's running parts (also a group colour)
)

// groupColors are the colours a progressEventType group or a transition stream may get (cyan,
// magenta, blue and their bright forms): picked by a hash of its name, so that each driver keeps
// one colour from run to run. Red and yellow are left to severities.
var groupColors = [...]string{"\x1b[36m", "\x1b[35m", "\x1b[34m", "\x1b[96m", "\x1b[95m", "\x1b[94m"}

func groupColor(group string) string {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(group); i++ {
		h ^= uint32(group[i])
		h *= 16777619
	}
	return groupColors[h%uint32(len(groupColors))]
}

// levelName is the JSON format's level: the severity's name from the one severity table
// (wireformat.Level), else the record's severity text.
func levelName(r *sdklog.Record) string {
	if name, _, ok := wireformat.Level(r.Severity()); ok {
		return name
	}
	if t := r.SeverityText(); t != "" {
		return t
	}
	return "UNSPECIFIED"
}

// appendLevel writes the pretty format's fixed-width level, so that the types line up, in its
// colour.
func (e *Exporter) appendLevel(b []byte, r *sdklog.Record) []byte {
	_, short, ok := wireformat.Level(r.Severity())
	if !ok {
		return append(b, "---"...)
	}
	code := sgrDim
	switch short {
	case "FTL", "ERR":
		code = sgrRed
	case "WRN":
		code = sgrYellow
	case "INF":
		code = sgrGreen
	}
	return e.marked(b, code, short)
}
