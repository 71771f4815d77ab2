package redact

import (
	"slices"
	"strings"
)

// A Shape is one kind of secret that free text shows, as the library's
// scan (text.go) finds it and as the collector's redaction rules find it
// (collector-config/progress.yaml, redaction): the one table both are
// checked against (shapes_test.go), and that docs/reliability.md shows.
type Shape struct {
	Name string
	// Example is a text that holds one; « and » mark the secret (the
	// library replaces exactly that).
	Example string
	// Avoids are look-alikes the library keeps as they are.
	Avoids []string
	// Collector are the collector's blocked_values for the shape: Go
	// regular expressions, each holding a literal that every match
	// contains (the tnco processor's fast path needs one). A match is
	// masked whole, so a rule may take the key with the value.
	Collector []string
}

// Pieces of the collector's rules for a secret-named pair: after the
// key, its separator and value (the value's forms as the library's
// pair reads them).
const (
	// A double-quoted value, past escaped quotes, also inside a JSON
	// string (\"...\"): never shorter than the value.
	rxQuoted = `\\*"(?:[^"\\\n]|\\.)*"`
	// An escaped quoted value whose closing quote is escaped too.
	rxEscQuoted = `\\+"[^\s]*`
	rxSingle    = `'[^'\n]*'`
	rxBraces    = `\{[^}\n]*\}`
	rxWord      = `[^\s"',;&|)}\]]+`
	// A YAML block scalar: the indicator, then the indented lines.
	rxBlock = `[|>][-+0-9]*[ \t]*(?:\n(?:[ \t]+[^\n]*)?)+`
	// After the key: "=", " is " (a word) or ":" (to the line's end).
	rxPairTail = `\\*["']?(?:(?:[ \t]*=[ \t]*|[ \t]+is[ \t]+)(?:` + rxQuoted + `|` + rxEscQuoted + `|` + rxSingle + `|` + rxBraces + `|` + rxWord +
		`)|[ \t]*:[ \t]*(?:` + rxQuoted + `|` + rxSingle + `|` + rxBlock + `|[^\n]+))`
)

// keyWords are the fragments of DefaultKeys read as words: the collector
// allows a separator between them ("API Key", "pass_word").
var keyWords = map[string][2]string{
	"password": {"pass", "word"}, "passwd": {"pass", "wd"}, "passphrase": {"pass", "phrase"},
	"apikey": {"api", "key"}, "privatekey": {"private", "key"}, "accesskey": {"access", "key"},
	"accountkey": {"account", "key"}, "sessionkey": {"session", "key"}, "nolog": {"no", "log"},
	"clientsecret": {"client", "secret"},
}

// pairRules are the collector's rules for the pairs of DefaultKeys: one
// for each first word of a fragment in its lower, UPPER and Title
// spellings (a rule that starts with a literal is found by one fast
// search; (?i) before it would run the regexp at every byte), masked from
// the fragment on. A fragment that holds another is the other's.
func pairRules() []string {
	var firsts []string
	rests := map[string][]string{}
	for _, f := range DefaultKeys {
		if slices.ContainsFunc(DefaultKeys, func(o string) bool { return o != f && strings.Contains(f, o) }) {
			continue
		}
		w, ok := keyWords[f]
		if !ok {
			w = [2]string{f, ""}
		}
		if _, seen := rests[w[0]]; !seen {
			firsts = append(firsts, w[0])
		}
		rests[w[0]] = append(rests[w[0]], w[1])
	}
	var out []string
	for _, first := range firsts {
		rest := ""
		if r := rests[first]; r[0] != "" {
			rest = `(?i:[-_. ]?(?:` + strings.Join(r, "|") + `))`
		}
		for _, spelling := range []string{first, strings.ToUpper(first), strings.ToUpper(first[:1]) + first[1:]} {
			out = append(out, spelling+rest+`[\w.-]*`+rxPairTail)
		}
	}
	return out
}

// KeyPattern is the collector's blocked_key_patterns: the fragments of
// DefaultKeys with a separator allowed between their words, and a key
// that ends in the word pass or pwd.
func KeyPattern() string {
	var alts []string
	for _, f := range DefaultKeys {
		if slices.ContainsFunc(DefaultKeys, func(o string) bool { return o != f && strings.Contains(f, o) }) {
			continue
		}
		if w, ok := keyWords[f]; ok {
			f = w[0] + "[-_. ]?" + w[1]
		}
		alts = append(alts, f)
	}
	return `(?i)(` + strings.Join(alts, "|") + `|[-_. ](?:pass|pwd)$)`
}

// Table is the shapes, in the order of the collector's rules.
var Table = []Shape{
	{
		Name:    "Private keys (PEM, PGP, OpenSSH, PuTTY; the whole value)",
		Example: "«-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----»",
		Avoids:  []string{"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN PUBLIC KEY-----"},
		Collector: []string{
			`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)`,
		},
	},
	{
		Name:    "Pairs with a secret key: key=value, key: value, key is value, JSON, aligned",
		Example: `export AWS_SECRET_ACCESS_KEY=«wJalrXUtnFEMI» region=eu-west-1`,
		Avoids: []string{"max_tokens=100", "secret_name: app-secrets", "token_ttl = 3600", "using password: YES",
			"password_set=false", "TOKEN_FILE=/var/run/secrets/tokens/vault", "npm_package_config_token_endpoint=https://x/token",
			"error: open /var/run/secrets/kubernetes.io/serviceaccount/token: no such file or directory",
			"failed to read secret: open /etc/secrets/api_key: no such file or directory"},
		Collector: pairRules(),
	},
	{
		Name:    "Labels of several words",
		Example: `"msg": "Secret Access Key: «x9TqLw»"`,
		Avoids:  []string{"the secret sauce: patience", "token count: 1523"},
	},
	{
		Name:    "Quoted values past escaped quotes",
		Example: `{"password":"«ab\"cd»","user":"bob"}`,
		Avoids:  []string{`{"password_set": false, "token": null}`},
	},
	{
		Name:    "YAML block scalars",
		Example: "  password: |\n    «s3cr3t-line-1\n    s3cr3t-line-2»\n  username: admin",
		Avoids:  []string{"  script: |\n    echo deploying\n  when: always"},
	},
	{
		Name:    "Aligned pairs (terraform output, env | column -t)",
		Example: "api_key          = «Zx81q0»\nusername         = admin",
		Avoids:  []string{"db_password = <sensitive>", "admin_token = (sensitive value)"},
	},
	{
		Name:    "Names ending in the word pass or pwd",
		Example: "DB_PASS=«Kq8mZ2» MYSQL_PWD=«Tr4in»",
		Avoids:  []string{"PWD=/srv/app", "bypass=true compass=north passenger=3"},
		// Each spelling a rule of its own that starts with it (masking
		// bypass=true too: the collector is the coarser line).
		Collector: []string{
			`PASS` + rxPairTail, `pass` + rxPairTail, `Pass` + rxPairTail,
			`PWD` + rxPairTail, `pwd` + rxPairTail, `Pwd` + rxPairTail,
		},
	},
	{
		Name:    "Templates and variables name a secret, and are kept",
		Example: `password=«hunter2» db_password={{ vault_db_password }}`,
		Avoids:  []string{`echo "token=${API_TOKEN}"`, "password=$(cat /run/secrets/db)", "password={{ db_password }}"},
	},
	{
		Name:    "Secret-named flags and their value",
		Example: `./deploy.sh --client-secret «c7e1» --token=«t0k3n» --env prod`,
		Avoids:  []string{"docker login -u ci --password-stdin registry", "vault write --token-file /etc/token x"},
		Collector: []string{
			`--?[\w-]*?(?i:pass(?:word|wd|phrase)?|secret|token|api-?key|access-?key|credential)(?:[ \t]+|=)(?:"[^"\n]*"|'[^'\n]*'|[^\s"'-][^\s"']*)`,
		},
	},
	{
		Name:    "mysql -pX",
		Example: `mysql -h db -u root -p«S3cret» app`,
		Avoids:  []string{"mkdir -p /var/lib/app", "ssh -p 2222 deploy@host", "ls -p /etc/secrets/"},
		Collector: []string{
			` -p[^\s"'-][^\s"']*`,
			`"-p[^\s"'-][^\s"']*`,
		},
	},
	{
		Name:    "curl -u user:password",
		Example: `curl -fsS -u deploy:«pw-1234» https://artifacts.example.com/upload`,
		Avoids:  []string{"docker run -u 1000:1000 nginx", "curl -u deploy https://x"},
		Collector: []string{
			`curl[^\n]*?[\s"'](?:-u|-U|--user|--proxy-user)(?:[ \t=]+|["', ]+)?["']?[^\s:"']*:[^\s"']+`,
		},
	},
	{
		Name:    "sshpass -p",
		Example: `sshpass -p «pw-ssh» ssh -p 2222 deploy@10.0.0.9 uptime`,
		Avoids:  []string{"ssh -p 2222 deploy@10.0.0.9 uptime"},
		Collector: []string{
			`sshpass[\s"',]+-p[\s"',]*[^\s"',]+`,
		},
	},
	{
		Name:    "htpasswd -b",
		Example: `htpasswd -bc /etc/nginx/.htpasswd admin «pw-ht»`,
		Avoids:  []string{"htpasswd -c /etc/nginx/.htpasswd admin"},
		Collector: []string{
			`htpasswd(?:[\s"',\[]+-[A-Za-z]+)*(?:[\s"',]+[^\s"',\]]+){2,3}`,
		},
	},
	{
		Name:    "openssl pass:",
		Example: `openssl req -new -key server.key -passin pass:«pw-ssl» -out server.csr`,
		Avoids:  []string{"openssl x509 -in server.crt -noout -subject"},
		Collector: []string{
			`pass:[^\s"']+`,
		},
	},
	{
		Name:    ".netrc entries",
		Example: "machine github.com login ci-bot password «pw-netrc»",
		Avoids:  []string{"machine learning is fun", "password changed for user deploy"},
		Collector: []string{
			`login[ \t]+[^\s"']+[ \t]+password[ \t]+[^\s"']+`,
			`password[ \t]+[^\s"']+[ \t]*(?m:$)`,
		},
	},
	{
		Name:    "Connection strings (Azure AccountKey, ODBC Pwd, ADO.NET Password)",
		Example: "Server=db;Uid=sa;Pwd=«pw-odbc»;Encrypt=yes;AccountKey=«a2V5Kw==»;",
		Avoids:  []string{"SharedAccessKeyName=RootManageSharedAccessKey"},
	},
	{
		Name:    "docker and npm auth",
		Example: `{"auths":{"registry.example.com":{"auth":"«ZGVwbG95OnB3LWRvY2tlcg==»"}}}`,
		Avoids:  []string{`"auth": "none"`},
		Collector: []string{
			`auth\\*"[ \t]*:[ \t]*\\*"[A-Za-z0-9+/=]{8,}`,
			`_auth[ \t]*=[ \t]*[A-Za-z0-9+/=]+`,
		},
	},
	{
		Name:    "URL user info (any byte but a blank, a double quote, / ? # or @)",
		Example: "psql postgresql://app:«pw;1,a&b(c)»@db.internal:5432/app",
		Avoids:  []string{"http://host:8080/path?x=1", "https://__token__:****@pypi.example.com/simple"},
		Collector: []string{
			"://[^/\\s:@\"'<>`]*:[^/\\s@\"<>`]+@",
		},
	},
	{
		Name:    "Bearer and Basic credentials",
		Example: "Authorization: Bearer «abcdefgh12345»",
		Avoids:  []string{"Basic setup complete", `WWW-Authenticate: Bearer realm="api"`},
		Collector: []string{
			`Bearer\s+[A-Za-z0-9._~+/=-]{8,}`,
			`bearer\s+[A-Za-z0-9._~+/=-]{8,}`,
			`BEARER\s+[A-Za-z0-9._~+/=-]{8,}`,
			`Basic\s+[A-Za-z0-9+/]{8,}={0,2}`,
		},
	},
	{
		Name:    "JSON Web Tokens",
		Example: "session «eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2ln» accepted",
		Avoids:  []string{"eyJhbGciOiJIUzI1NiJ9 is a header alone"},
		Collector: []string{
			`eyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?`,
		},
	},
	{
		Name:    "Tokens with a well-known prefix (GitHub, GitLab, Slack, AWS key ids, Google, Stripe, npm, PyPI, Hugging Face, SendGrid, Vault and others)",
		Example: "pushing with «ghp_R4nd0mT0kenValueForTests0123456789» and «SG.ciSendGridKey0901abcd.efghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS0901»",
		Avoids: []string{"hf_hub_download finished", "npm_package_name=web-frontend", "the ghp_ prefix marks GitHub tokens",
			"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "123e4567-e89b-12d3-a456-426614174000",
			"traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "10.42.3.17", `resourceVersion: "48213377"`},
		Collector: []string{
			`gh(?:[pousr]_[A-Za-z0-9]{30,}|ithub_pat_[A-Za-z0-9_]{40,})`,
			`gl(?:(?:pat|ptt|dt|rt|cbt|oas|ft|imt|soat)-[A-Za-z0-9_-]{20,}|(?:c|sa)_[A-Za-z0-9_-]{32,})`,
			`x(?:ox[bpares]|app)-[A-Za-z0-9_-]{10,}`,
			`A(?:(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA)[A-Z0-9]{16}\b|Iza[A-Za-z0-9_-]{35,}|GE-SECRET-KEY-1[A-Z0-9]{58,})`,
			`sk(?:_(?:live|test)_[A-Za-z0-9_-]{20,}|-(?:ant|proj)-[A-Za-z0-9_-]{30,})`,
			`rk_(?:live|test)_[A-Za-z0-9_-]{20,}`,
			`npm_[A-Za-z0-9]{36}\b`,
			`pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`,
			`dckr_pat_[A-Za-z0-9_-]{20,}`,
			`do[op]_v1_[A-Za-z0-9_-]{60,}`,
			`h(?:f_[A-Za-z0-9]{30,}\b|v[sb]\.[A-Za-z0-9_-]{24,})`,
			`shp(?:at|ss|ca|pa)_[A-Za-z0-9_]{32,}`,
			`sq0(?:atp-[A-Za-z0-9_-]{22,}|csp-[A-Za-z0-9_-]{40,})`,
			`SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`,
		},
	},
}

// CollectorRules are the collector's blocked_values: every shape's, in
// the table's order.
func CollectorRules() []string {
	var out []string
	for _, s := range Table {
		out = append(out, s.Collector...)
	}
	return out
}
