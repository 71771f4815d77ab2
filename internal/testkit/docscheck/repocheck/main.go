// Command repocheck is make lint's check of the repository itself: no
// tracked file over docscheck.MaxFileSize outside testdata, no broken
// relative link or anchor in the Markdown, and no Test, Fuzz, Benchmark or
// Example named in Markdown or a Go comment that does not exist. Run it
// from the repository's root.
package main

import (
	"fmt"
	"os"

	"github.com/progressotel/progressotel/internal/testkit/docscheck"
)

func main() {
	files, err := docscheck.TrackedFiles(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "repocheck:", err)
		os.Exit(2)
	}
	problems := docscheck.Check(".", files)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "repocheck: %d problems in %d tracked files\n", len(problems), len(files))
		os.Exit(1)
	}
}
