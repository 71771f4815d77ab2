package terraform

import (
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/kit/cmdline"
)

// -json cannot answer an approval prompt: which applies would prompt.
func TestTerraformPrompts(t *testing.T) {
	for _, tc := range []struct {
		args   string
		prompt bool
	}{
		{"apply", true},
		{"apply -auto-approve", false},
		{"apply --auto-approve=true", false},
		{"apply tfplan", false},
		{"apply -var=a=b", true},
		{"destroy", true},
		{"destroy -auto-approve", false},
		{"plan", false},
		{"init", false},
	} {
		_, sub, rest, _ := cmdline.SplitSubcommand(strings.Fields(tc.args))
		if got := prompts(sub, rest); got != tc.prompt {
			t.Errorf("%s: prompts %v, want %v", tc.args, got, tc.prompt)
		}
	}
}
