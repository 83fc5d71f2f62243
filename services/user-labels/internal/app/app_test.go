package app

import "testing"

func TestSubstringSearchable(t *testing.T) {
	for q, want := range map[string]bool{
		"de": false, "desk": true, "---": false, "-.-_": false, "a--": true, "0x1": true, "İst": true, "ab": false, "   ": false,
	} {
		if got := SubstringSearchable(q); got != want {
			t.Errorf("SubstringSearchable(%q) = %v, want %v", q, got, want)
		}
	}
}
