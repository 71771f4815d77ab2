package prettyexporter

import (
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/base/wireformat"
)

// levelName is the JSON format's level: the severity's name from the one
// severity table (wireformat.Level), else the record's severity text.
func levelName(r *sdklog.Record) string {
	if name, _, ok := wireformat.Level(r.Severity()); ok {
		return name
	}
	if t := r.SeverityText(); t != "" {
		return t
	}
	return "UNSPECIFIED"
}

// appendLevel writes the pretty format's fixed-width level, so that the
// types line up, in its colour.
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
