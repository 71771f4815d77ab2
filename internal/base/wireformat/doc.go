// Package wireformat holds what only the library needs of the progress
// record format: the severity names, the encoded size of details, the
// payload keys of a transition stream and the JSON-like value of an
// attribute. The format itself (names, escapes, markers, the View of a
// record, the JSON writers and the TNCO message) lives in the tncomessage
// module, which the collector shares.
package wireformat
