package wireformat

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/base/cache"
	"github.com/progressotel/progressotel/tncomessage"
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
	p := tncomessage.TransitionPrefix + stream + "."
	return &TransitionKeys{
		Status: attribute.Key(p + "status"), Reason: attribute.Key(p + "reason"), Message: attribute.Key(p + "message"),
		PrevStatus: attribute.Key(p + "previous.status"), PrevReason: attribute.Key(p + "previous.reason"),
		PrevMessage: attribute.Key(p + "previous.message"),
	}
}
