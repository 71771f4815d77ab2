package redact

// DefaultKeys are the one list of progress.DefaultSecretKeys, which returns
// a copy: the list the collector's blocked_key_patterns and pair rules
// (Table) are built from, here where the table's tests can read it. Never
// changed.
var DefaultKeys = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey",
	"privatekey", "authorization", "credential", "accesskey", "accountkey", "cookie",
	"clientsecret", "sessionkey", "nolog",
}
