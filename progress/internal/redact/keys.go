package redact

// DefaultKeys are the key fragments progress.DefaultSecretKeys starts
// with: the one list the library's Redactor and the collector's
// blocked_key_patterns (Table) are both built from.
var DefaultKeys = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey",
	"privatekey", "authorization", "credential", "accesskey", "accountkey", "cookie",
	"clientsecret", "sessionkey", "nolog",
}
