package kube_test

import (
	"strings"
	"testing"

	"github.com/progressotel/progressotel/kube"
)

func TestReadObjects(t *testing.T) {
	objs, err := kube.ReadObjects(strings.NewReader(`
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
# only a comment
---
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Secret, metadata: {name: b}}
  - {apiVersion: apps/v1, kind: Deployment, metadata: {name: c, namespace: x}}
---
{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "d"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	if want := "ConfigMap/a Secret/b Deployment/c Service/d"; strings.Join(got, " ") != want {
		t.Errorf("objects %v, want %s", got, want)
	}

	for _, tc := range []struct{ in, want string }{
		{"kind: ConfigMap\nmetadata: {name: a}\n", "document 1: an object has no apiVersion"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n", "document 2: an object has no kind"},
		{"apiVersion: v1\nkind: ConfigMap\n", "document 1: a ConfigMap has no metadata.name"},
		{"apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Secret}]\n", "document 1: a Secret has no metadata.name"},
		{"apiVersion: [\n", "document 1: "},
	} {
		if _, err := kube.ReadObjects(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadObjects(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}
