package main

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The custom resource of the demo: a Widget that is provisioned once and
// can then be powered on and off. In a real controller these types come
// from controller-gen; here DeepCopy is written by hand.

var groupVersion = schema.GroupVersion{Group: "demo.progressotel.io", Version: "v1alpha1"}

// Condition types of provisioninglog: Available carries provisioning, Active the
// lifecycle (power) state.
const (
	conditionAvailable = "Available"
	conditionActive    = "Active"
)

// Widget is the custom resource.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is the desired state.
type WidgetSpec struct {
	// Running is the desired power state.
	Running bool `json:"running"`
}

// WidgetStatus is the observed state.
type WidgetStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// DeepCopyInto copies w into out; a Condition holds no pointer, so a
// copy of the slice is a deep one.
func (w *Widget) DeepCopyInto(out *Widget) {
	*out = *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = slices.Clone(w.Status.Conditions)
}

// DeepCopyObject returns a deep copy of w.
func (w *Widget) DeepCopyObject() runtime.Object {
	if w == nil {
		return nil
	}
	out := new(Widget)
	w.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a deep copy of l.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Widget, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// addToScheme registers the Widget types, as a generated AddToScheme does.
func addToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(groupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, groupVersion)
	return nil
}
