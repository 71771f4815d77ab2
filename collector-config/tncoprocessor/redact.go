package tncoprocessor

import (
	"encoding/base64"
	"math"
	"strconv"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/progressotel/progressotel/tncomessage"
)

// redactAttrs applies the redaction rules to every attribute of m, in
// place, as the redaction processor applies them to attributes and a log
// body: the value of a blocked key is masked whole, whatever its type (and
// so is a map entry's or a nested map's, at any depth); in every other
// value, each scalar's text (AsString) has its blocked values masked, and
// a scalar whose text changes becomes the changed string.
func (c *check) redactAttrs(m pcommon.Map) {
	for k, v := range m.All() {
		c.redactValue(k, v)
	}
}

func (c *check) redactValue(key string, v pcommon.Value) {
	if c.keyBlocked(key) {
		if s := v.Str(); v.Type() != pcommon.ValueTypeStr || mask(s) != s {
			v.SetStr(mask(s))
		}
		return
	}
	c.redactBody(v)
}

// redactBody applies the blocked values to v, and the blocked keys to the
// maps in it.
func (c *check) redactBody(v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		s := v.Str()
		if out := c.maskValues(s); out != s {
			v.SetStr(out)
		}
	case pcommon.ValueTypeInt:
		if !c.numbersClean {
			c.scalar(v, strconv.AppendInt(c.text[:0], v.Int(), 10))
		}
	case pcommon.ValueTypeDouble:
		if f := v.Double(); !c.numbersClean && !math.IsNaN(f) && !math.IsInf(f, 0) {
			c.scalar(v, tncomessage.AppendJSONFloat(c.text[:0], f, 64))
		}
	case pcommon.ValueTypeBool:
		if !c.boolsClean {
			c.scalar(v, strconv.AppendBool(c.text[:0], v.Bool()))
		}
	case pcommon.ValueTypeBytes:
		c.scalar(v, base64.StdEncoding.AppendEncode(c.text[:0], v.Bytes().AsRaw()))
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := range s.Len() {
			c.redactBody(s.At(i))
		}
	case pcommon.ValueTypeMap:
		c.redactAttrs(v.Map())
	case pcommon.ValueTypeEmpty:
		if p := c.maskValues(""); p != "" {
			v.SetStr(p)
		}
	}
}

// scalar masks the blocked values in text, a scalar's text: when any
// matches, v becomes the masked text.
func (c *check) scalar(v pcommon.Value, text []byte) {
	c.text = text
	s := unsafe.String(unsafe.SliceData(text), len(text))
	if p := c.maskValues(s); p != s {
		v.SetStr(p)
	}
}
