package progress_test

import (
	"fmt"

	"github.com/progressotel/progressotel/progress"
)

// Record applies the default Redactor to every string of an event; Value
// is the same policy for text that leaves another way. Only the secret is
// replaced, so the line still says what happened.
func ExampleRedactor_Value() {
	r := progress.DefaultRedactor()
	for _, line := range []string{
		"export TOKEN=abc123 && ./deploy.sh",
		"git clone https://deploy:hunter2@git.example/app.git",
		`{"user":"bob","password":"s3cret"}`,
		"pushing with ghp_R4nd0mT0kenValueForTests0123456789",
		"ratio 3:4, retry=3",
	} {
		fmt.Println(r.Value(line))
	}
	// Output:
	// export TOKEN=[REDACTED] && ./deploy.sh
	// git clone https://deploy:[REDACTED]@git.example/app.git
	// {"user":"bob","password":"[REDACTED]"}
	// pushing with [REDACTED]
	// ratio 3:4, retry=3
}
