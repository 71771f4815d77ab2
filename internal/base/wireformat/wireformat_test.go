package wireformat

import (
	"testing"

	"go.opentelemetry.io/otel/log"
)

func TestLevel(t *testing.T) {
	cases := []struct {
		sev         log.Severity
		name, short string
	}{
		{log.SeverityTrace, "TRACE", "TRC"}, {log.SeverityDebug4, "DEBUG", "DBG"},
		{log.SeverityInfo, "INFO", "INF"}, {log.SeverityWarn2, "WARN", "WRN"},
		{log.SeverityError, "ERROR", "ERR"}, {log.SeverityFatal4, "FATAL", "FTL"},
	}
	for _, c := range cases {
		if n, s, ok := Level(c.sev); !ok || n != c.name || s != c.short {
			t.Errorf("Level(%v) = %q %q %v", c.sev, n, s, ok)
		}
	}
	if _, _, ok := Level(log.SeverityUndefined); ok {
		t.Error("an undefined severity has no level")
	}
}

func TestTransitionKeys(t *testing.T) {
	k := TransitionKeysFor("lifecycle")
	if k.Status != "progress.lifecycle.status" || k.PrevMessage != "progress.lifecycle.previous.message" {
		t.Errorf("keys %+v", k)
	}
	if TransitionKeysFor("lifecycle") != k {
		t.Error("the keys of a stream are built once")
	}
}
