package terraform

import "testing"

func TestWithoutKeys(t *testing.T) {
	for in, want := range map[string]string{
		"null_resource.a":                       "null_resource.a",
		"null_resource.a[0]":                    "null_resource.a",
		`module.m["x"].aws_instance.web["a]b"]`: "module.m.aws_instance.web",
		`module.m["q\"]"].null_resource.b[12]`:  "module.m.null_resource.b",
		"data.local_file.f":                     "data.local_file.f",
	} {
		if got := withoutKeys(in); got != want {
			t.Errorf("withoutKeys(%q) = %q, want %q", in, got, want)
		}
	}
}
