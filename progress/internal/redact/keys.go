package redact

// DefaultKeys are progress.DefaultSecretKeys (a test holds them equal):
// the list the collector's blocked_key_patterns and pair rules (Table)
// are built from, here where the table's tests can read it.
var DefaultKeys = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey",
	"privatekey", "authorization", "credential", "accesskey", "accountkey", "cookie",
	"clientsecret", "sessionkey", "nolog",
}
