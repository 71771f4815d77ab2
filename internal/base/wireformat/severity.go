package wireformat

import "go.opentelemetry.io/otel/log"

// levels is the one severity-name table: the lowest severity number of
// each level, its name (the SeverityText progress writes, the JSON
// format's level) and its fixed-width short form (the pretty format's).
var levels = [...]struct {
	min         log.Severity
	name, short string
}{
	{log.SeverityFatal, "FATAL", "FTL"},
	{log.SeverityError, "ERROR", "ERR"},
	{log.SeverityWarn, "WARN", "WRN"},
	{log.SeverityInfo, "INFO", "INF"},
	{log.SeverityDebug, "DEBUG", "DBG"},
	{log.SeverityTrace, "TRACE", "TRC"},
}

// Level returns the level of a severity number: its name ("WARN" for
// log.SeverityWarn2) and its short form ("WRN"). ok is false for an
// undefined (zero or negative) severity.
func Level(s log.Severity) (name, short string, ok bool) {
	for _, l := range levels {
		if s >= l.min {
			return l.name, l.short, true
		}
	}
	return "", "", false
}
