package kube

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// ReadObjects reads Kubernetes objects from YAML documents (separated by
// "---") or JSON, as kubectl apply -f reads them. Empty documents are
// skipped and a List's items are expanded. Every object must have an
// apiVersion, a kind and a metadata.name; the error names the first
// document that has not.
func ReadObjects(r io.Reader) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("kube: document %d: %w", doc, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		items := []*unstructured.Unstructured{u}
		if u.IsList() {
			items = nil
			err := u.EachListItem(func(o runtime.Object) error {
				items = append(items, o.(*unstructured.Unstructured)) // as every item of an unstructured list
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("kube: document %d: %w", doc, err)
			}
		}
		for _, item := range items {
			if err := checkObject(item); err != nil {
				return nil, fmt.Errorf("kube: document %d: %w", doc, err)
			}
		}
		out = append(out, items...)
	}
}

// ReadObjectsBytes is ReadObjects of b.
func ReadObjectsBytes(b []byte) ([]*unstructured.Unstructured, error) {
	return ReadObjects(bytes.NewReader(b))
}

func checkObject(u *unstructured.Unstructured) error {
	switch {
	case u.GetAPIVersion() == "":
		return errors.New("an object has no apiVersion")
	case u.GetKind() == "":
		return errors.New("an object has no kind")
	case u.GetName() == "":
		return fmt.Errorf("a %s has no metadata.name", u.GetKind())
	}
	return nil
}
