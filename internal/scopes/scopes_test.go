package scopes

import "testing"

func TestWithin(t *testing.T) {
	tests := []struct {
		variable, scope string
		want            bool
	}{
		{"/a", "/a", true},
		{"/a/b", "/a", true},
		{"/a/b", "/a/", true},
		{"/a/b/c", "/a/b", true},
		{"/ab", "/a", false},
		{"/b/a", "/a", false},
		{"/a", "/a/b", false},
		{"/anything", "/", true},
	}
	for _, tc := range tests {
		if got := Within(tc.variable, tc.scope); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.variable, tc.scope, got, tc.want)
		}
	}
}
