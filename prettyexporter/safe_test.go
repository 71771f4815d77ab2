package prettyexporter_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// sgr matches the SGR sequences the exporter writes itself (see color.go).
var sgr = regexp.MustCompile("\x1b\\[(?:0|1|2|1;31|1;33|32|36|35|34|96|95|94)m")

// checkSafe reports the first byte of out that could drive a terminal: a
// C0 control other than the newline ending a line, or DEL. With colour on,
// the exporter's own SGR sequences are removed first; any other escape is
// an error.
func checkSafe(out string, color bool) error {
	if color {
		out = sgr.ReplaceAllString(out, "")
	}
	for i := 0; i < len(out); i++ {
		c := out[i]
		if c == '\n' {
			continue
		}
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("raw byte %#x at %d", c, i)
		}
	}
	// C1 controls (U+0080..U+009F) are escaped too: some terminals read
	// U+009B as CSI.
	for i, r := range out {
		if r >= 0x80 && r <= 0x9f {
			return fmt.Errorf("raw C1 control %U at %d", r, i)
		}
	}
	return nil
}

func testTime() time.Time { return time.Date(2026, 11, 29, 14, 3, 7, 412000000, time.UTC) }

// uniqueKeys reports a key that appears twice in one JSON object of line:
// encoding/json would silently keep the last, and other parsers differ.
func uniqueKeys(line string) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(line)))
	type obj struct {
		keys  map[string]bool
		isObj bool
		inKey bool
	}
	var stack []*obj
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			return err
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				if top != nil && top.isObj {
					top.inKey = true
				}
				stack = append(stack, &obj{keys: map[string]bool{}, isObj: true, inKey: true})
				continue
			case '[':
				if top != nil && top.isObj {
					top.inKey = true
				}
				stack = append(stack, &obj{})
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			if top != nil && top.isObj && top.inKey {
				if top.keys[t] {
					return fmt.Errorf("duplicate key %q", t)
				}
				top.keys[t] = true
				top.inKey = false
				continue
			}
		}
		if top != nil && top.isObj {
			top.inKey = true
		}
	}
}
