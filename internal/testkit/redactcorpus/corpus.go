// Package redactcorpus is the shared test corpus of redaction in free
// text: texts a driver or a tool really gives (a task's command line, a
// debug message, a provisioner's output line), each with the secrets in
// it that must never leave the process. The library, both adapters, the
// CLI and the collector feed the same texts through their own paths and
// check what comes out with Leaks, so that they redact the same shapes.
// Its labelled part (corpus.txt, Corpus) marks each secret's exact span,
// from which progress/internal/redact measures the policy's recall and
// precision.
package redactcorpus

import (
	_ "embed"
	"encoding/base64"
	"fmt"
	"strings"
)

// Case is one text with the secrets it holds.
type Case struct {
	Name string
	// Text as the tool gives it: one line unless the case is about lines.
	Text string
	// Secrets must not appear anywhere in what leaves the process.
	Secrets []string
	// Keep is text around the secret that the library's redaction keeps
	// (it replaces the secret only); the collector's masks the match, so
	// only the library checks it.
	Keep []string
}

// Secrets of the corpus: made up, in the real shapes.
const (
	GitHubToken = "ghp_R4nd0mT0kenValueForTests0123456789"
	JWT         = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJyZWRhY3Rjb3JwdXMiLCJpYXQiOjE3MDAwMDAwMDB9.c2lnbmF0dXJlLW9mLXRoZS10ZXN0LXRva2Vu"
	AWSSecret   = "wJalrXUtnFEMIK7MDENGbPxRfiCYREDACTCORPUS"
	AWSKeyID    = "AKIAREDACTCORPUS0123"
	GitLabToken = "glpat-Rc0rpusT0kenValue12345"
	SlackToken  = "xoxb-123456789012-redactcorpus"
	StripeKey   = "sk_live_RedactCorpusStripeKey0123"
	PrivateKey  = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAredactcorpusbody\n-----END RSA PRIVATE KEY-----"
	PGPKey      = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGredactcorpusbody\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----"
)

// basicCredential is base64("deploy:basic-corpus-pw").
var basicCredential = base64.StdEncoding.EncodeToString([]byte("deploy:basic-corpus-pw"))

// Cases are the corpus. The first ones are those seen in real
// runs; the others are the remaining shapes the redaction finds; the
// labelled corpus (Corpus) follows them, one case a text.
var Cases = []Case{
	{Name: "ghp token in a command line (args._raw_params)",
		Text:    "git clone https://" + GitHubToken + "@github.com/acme/app.git /srv/app",
		Secrets: []string{GitHubToken}, Keep: []string{"git clone https://", "@github.com/acme/app.git /srv/app"}},
	{Name: "Bearer JWT in a command line (args._raw_params)",
		Text:    `curl -sf -H "Authorization: Bearer ` + JWT + `" https://api.example/v1/deploy`,
		Secrets: []string{JWT}, Keep: []string{"curl -sf -H", "https://api.example/v1/deploy"}},
	{Name: "debug of api_token (taskResult.msg)",
		Text:    "the token is tok-4f9a8b7c6d5e",
		Secrets: []string{"tok-4f9a8b7c6d5e"}, Keep: []string{"the token is "}},
	{Name: "TOKEN=",
		Text:    "export TOKEN=abc123 && ./deploy.sh",
		Secrets: []string{"abc123"}, Keep: []string{"export TOKEN=", "&& ./deploy.sh"}},
	{Name: "password: ",
		Text:    "password: hunter2",
		Secrets: []string{"hunter2"}, Keep: []string{"password: "}},
	{Name: "URL user info",
		Text:    "fetching https://user:hunter2@host/",
		Secrets: []string{"hunter2"}, Keep: []string{"https://user:", "@host/"}},
	{Name: "AWS_SECRET_ACCESS_KEY=",
		Text:    "AWS_SECRET_ACCESS_KEY=" + AWSSecret + " aws s3 ls",
		Secrets: []string{AWSSecret}, Keep: []string{"AWS_SECRET_ACCESS_KEY=", " aws s3 ls"}},
	{Name: "JSON text with a password",
		Text:    `{"user":"bob","password":"json-corpus-pw","port":5432}`,
		Secrets: []string{"json-corpus-pw"}, Keep: []string{`{"user":"bob","password":"`, `","port":5432}`}},
	{Name: "bare ghp line (provisioner output)",
		Text:    GitHubToken,
		Secrets: []string{GitHubToken}},
	// The other shapes.
	{Name: "escaped JSON inside a JSON string",
		Text:    `{"body":"{\"client_secret\":\"escaped-corpus-pw\",\"id\":7}"}`,
		Secrets: []string{"escaped-corpus-pw"}, Keep: []string{`\"id\":7}`}},
	{Name: "JSON escaped twice (a JSON string inside a JSON string inside one)",
		Text:    `"{\\\"body\\\":\\\"{\\\\\\\"token\\\\\\\":\\\\\\\"twice-escaped-pw\\\\\\\"}\\\"}"`,
		Secrets: []string{"twice-escaped-pw"}},
	{Name: "key = 'quoted value'",
		Text:    "db_password = 'a quoted corpus pw' # set by vault",
		Secrets: []string{"a quoted corpus pw"}, Keep: []string{"# set by vault"}},
	{Name: "query parameter",
		Text:    "GET /callback?access_token=query-corpus-tok&state=ok",
		Secrets: []string{"query-corpus-tok"}, Keep: []string{"&state=ok"}},
	{Name: "header with an API key",
		Text:    "X-Api-Key: header-corpus-key",
		Secrets: []string{"header-corpus-key"}, Keep: []string{"X-Api-Key: "}},
	{Name: "Basic credentials",
		Text:    "Authorization header was Basic " + basicCredential,
		Secrets: []string{basicCredential}, Keep: []string{"Authorization header was Basic "}},
	{Name: "bare JWT",
		Text:    "session " + JWT + " accepted",
		Secrets: []string{JWT}, Keep: []string{"session ", " accepted"}},
	{Name: "AWS access key id",
		Text:    "using key " + AWSKeyID + " in eu-west-1",
		Secrets: []string{AWSKeyID}, Keep: []string{"using key ", " in eu-west-1"}},
	{Name: "GitLab token",
		Text:    "registry login with " + GitLabToken,
		Secrets: []string{GitLabToken}, Keep: []string{"registry login with "}},
	{Name: "Slack token",
		Text:    "notify via " + SlackToken + " to #ops",
		Secrets: []string{SlackToken}, Keep: []string{"notify via ", " to #ops"}},
	{Name: "Stripe key",
		Text:    "billing key " + StripeKey,
		Secrets: []string{StripeKey}, Keep: []string{"billing key "}},
	{Name: "PEM private key",
		Text:    "wrote id_rsa:\n" + PrivateKey,
		Secrets: []string{"redactcorpusbody"}},
	{Name: "PGP private key block",
		Text:    PGPKey,
		Secrets: []string{"redactcorpusbody"}},
}

// corpusText is the labelled corpus: texts as tools print them, with
// the exact spans of their secrets (see the file's header).
//
//go:embed corpus.txt
var corpusText string

// Labelled is one text of the labelled corpus.
type Labelled struct {
	Source string // the tool output it was written from ("set -x traces")
	Line   int    // its line in corpus.txt
	Text   string
	// Spans are the byte ranges of Text that are secret, in order; none
	// when the text holds no secret.
	Spans [][2]int
}

// Corpus is the labelled corpus, in the file's order.
var Corpus = parse(corpusText)

func parse(text string) []Labelled {
	var out []Labelled
	source := ""
	for n, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "# @ "); ok {
			source = rest
			continue
		}
		if line == "#" || strings.HasPrefix(line, "# ") || line == "" {
			continue
		}
		l := Labelled{Source: source, Line: n + 1}
		var b strings.Builder
		open := -1
		for _, r := range strings.ReplaceAll(line, "⏎", "\n") {
			switch r {
			case '«':
				if open >= 0 {
					panic(fmt.Sprintf("corpus.txt:%d: « inside a span", n+1))
				}
				open = b.Len()
			case '»':
				if open < 0 {
					panic(fmt.Sprintf("corpus.txt:%d: » without «", n+1))
				}
				l.Spans = append(l.Spans, [2]int{open, b.Len()})
				open = -1
			default:
				b.WriteRune(r)
			}
		}
		if open >= 0 {
			panic(fmt.Sprintf("corpus.txt:%d: « not closed", n+1))
		}
		l.Text = b.String()
		out = append(out, l)
	}
	return out
}

// Secrets are the secrets of l as Leaks looks for them: each span's
// lines, without the indentation between them.
func (l Labelled) Secrets() []string {
	var out []string
	for _, sp := range l.Spans {
		for _, piece := range strings.Split(l.Text[sp[0]:sp[1]], "\n") {
			if piece = strings.TrimSpace(piece); piece != "" {
				out = append(out, piece)
			}
		}
	}
	return out
}

func init() {
	for _, l := range Corpus {
		Cases = append(Cases, Case{Name: fmt.Sprintf("corpus.txt:%d (%s)", l.Line, l.Source), Text: l.Text, Secrets: l.Secrets()})
	}
}

// Clean are texts with no secret that the library's redaction leaves as
// they are.
var Clean = []string{
	"plain output line",
	"ratio 3:4 at 12:00, retry=3",
	"http://host:8080/path?x=1",
	"Basic setup complete",
	"the ghp_ prefix marks GitHub tokens",
	"token=",
	"Bearer",
	"changed=1 ok=4 failed=0",
}

// Leaks returns, for each secret of the corpus found in out, which case
// it is of: nil when nothing leaked.
func Leaks(out string) []string {
	var found []string
	for _, c := range Cases {
		for _, s := range c.Secrets {
			if strings.Contains(out, s) {
				found = append(found, fmt.Sprintf("%s: %q", c.Name, s))
			}
		}
	}
	return found
}

// Lines are the lines of the corpus's texts, in order, as lines of a
// tool's output (a provisioner's, a command's under progressotel run
// --lines), one event each. A private key is then printed one line at a
// time: only a reader that keeps the state of Redactor.Line from line to
// line redacts its body.
func Lines() []string {
	var out []string
	for _, c := range Cases {
		out = append(out, strings.Split(c.Text, "\n")...)
	}
	return out
}
