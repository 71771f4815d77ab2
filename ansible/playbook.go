package ansible

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Playbook says what Run runs.
type Playbook struct {
	// Playbook is the playbook file, relative to ProjectDir or absolute.
	// Required.
	Playbook string
	// ProjectDir holds the playbook, its roles and files. Empty: the
	// playbook's own directory.
	ProjectDir string
	// Inventory is an inventory file or directory. Empty: Ansible's
	// default (its configured inventory, else an implicit localhost).
	Inventory string
	// Limit restricts the run to the hosts matching this pattern (Ansible's
	// --limit).
	Limit string
	// ExtraVars are Ansible's extra variables (-e), which take precedence
	// over every other variable and skip the matching vars_prompt. They
	// are written to a file in the run's private directory, never on a
	// command line where other users could read them.
	ExtraVars map[string]any
	// Env adds to, or overrides, the environment that ansible-runner and
	// Ansible inherit from the current process (ANSIBLE_* settings,
	// credentials of inventory plugins, ...).
	Env map[string]string
	// Args are more ansible-playbook arguments (--tags, --check, -v, ...).
	Args []string
}

// resolved is a Playbook with absolute paths, checked before a run.
type resolved struct {
	project, playbook, inventory string
}

// resolve checks that the playbook exists and makes the paths absolute:
// ansible-runner runs in the project directory.
func (p Playbook) resolve() (resolved, error) {
	var r resolved
	if p.Playbook == "" {
		return r, &PlaybookError{Reason: "no playbook given", Err: fs.ErrInvalid}
	}
	project := p.ProjectDir
	path := p.Playbook
	if project == "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return r, &PlaybookError{Playbook: p.Playbook, Reason: err.Error(), Err: err}
		}
		project, path = filepath.Dir(abs), filepath.Base(abs)
	}
	project, err := filepath.Abs(project)
	if err != nil {
		return r, &PlaybookError{Playbook: p.Playbook, Reason: err.Error(), Err: err}
	}
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(project, path)
	}
	switch fi, err := os.Stat(full); {
	case errors.Is(err, fs.ErrNotExist):
		return r, &PlaybookError{Playbook: p.Playbook, Reason: "not found at " + full, Err: err}
	case err != nil:
		return r, &PlaybookError{Playbook: p.Playbook, Reason: err.Error(), Err: err}
	case fi.IsDir():
		return r, &PlaybookError{Playbook: p.Playbook, Reason: full + " is a directory, not a playbook", Err: fs.ErrInvalid}
	}
	r.project, r.playbook = project, path
	if p.Inventory != "" {
		inv, err := filepath.Abs(p.Inventory)
		if err != nil {
			return r, fmt.Errorf("ansible: inventory %q: %w", p.Inventory, err)
		}
		if _, err := os.Stat(inv); err != nil {
			return r, fmt.Errorf("ansible: inventory %q: %w", p.Inventory, err)
		}
		r.inventory = inv
	}
	return r, nil
}
