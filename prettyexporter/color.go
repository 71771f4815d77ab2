package prettyexporter

// The SGR sequences the pretty exporter writes, and nothing else: the
// fuzz test strips exactly these and then finds no escape byte left.
const (
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrDim    = "\x1b[2m"
	sgrRed    = "\x1b[1;31m" // bold red: ERROR, FATAL
	sgrYellow = "\x1b[1;33m" // bold yellow: WARN
	sgrGreen  = "\x1b[32m"   // INFO
	sgrCyan   = "\x1b[36m"   // the live view's running parts (also a group colour)
)

// groupColors are the colours a progressEventType group or a transition
// stream may get: picked by a hash of its name, so that each driver keeps
// one colour from run to run. Red and yellow are left to severities.
var groupColors = [...]string{
	"\x1b[36m", // cyan
	"\x1b[35m", // magenta
	"\x1b[34m", // blue
	"\x1b[96m", // bright cyan
	"\x1b[95m", // bright magenta
	"\x1b[94m", // bright blue
}

func groupColor(group string) string {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(group); i++ {
		h ^= uint32(group[i])
		h *= 16777619
	}
	return groupColors[h%uint32(len(groupColors))]
}
