package wireformat

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/base/cache"
)

// TransitionKeys are the payload keys of one stream's transitions:
// progress.<stream>.status, ... and progress.<stream>.previous.status, ...
type TransitionKeys struct {
	Status, Reason, Message, PrevStatus, PrevReason, PrevMessage attribute.Key
}

// maxCachedStreams bounds the streams whose keys are kept, so that a
// caller inventing stream names cannot grow the cache without limit.
const maxCachedStreams = 256

var transitionKeys = cache.New[string, *TransitionKeys](maxCachedStreams)

// TransitionKeysFor returns the payload keys of stream, built once per
// stream (within a bound) and read without a lock afterwards.
func TransitionKeysFor(stream string) *TransitionKeys {
	return transitionKeys.Get(stream, buildTransitionKeys, strings.Clone)
}

func buildTransitionKeys(stream string) *TransitionKeys {
	p := TransitionPrefix + stream + "."
	return &TransitionKeys{
		Status: attribute.Key(p + "status"), Reason: attribute.Key(p + "reason"), Message: attribute.Key(p + "message"),
		PrevStatus: attribute.Key(p + "previous.status"), PrevReason: attribute.Key(p + "previous.reason"),
		PrevMessage: attribute.Key(p + "previous.message"),
	}
}

// transitionField returns the field a key names for stream ("status",
// "previous.reason", ...), or "" when the key is not part of stream's
// payload. It allocates nothing.
func transitionField(key, stream string) string {
	n := len(TransitionPrefix) + len(stream)
	if len(key) <= n+1 || !strings.HasPrefix(key, TransitionPrefix) ||
		key[len(TransitionPrefix):n] != stream || key[n] != '.' {
		return ""
	}
	switch f := key[n+1:]; f {
	case "status", "reason", "message", "previous.status", "previous.reason", "previous.message":
		return f
	}
	return ""
}
