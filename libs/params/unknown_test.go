package params

import (
	"net/url"
	"reflect"
	"testing"
)

func TestDropUnknown(t *testing.T) {
	q, _ := url.ParseQuery("base=a&chains=x&chains=y&zz=1&aa=2&aa=3")
	got := DropUnknown(q, "base", "chains", "limit")
	want := url.Values{"base": {"a"}, "chains": {"x", "y"}}
	if !reflect.DeepEqual(got, []string{"aa", "zz"}) || !reflect.DeepEqual(q, want) {
		t.Fatalf("dropped %v, left %v; want [aa zz], %v", got, q, want)
	}
	if got := DropUnknown(url.Values{}, "base"); got != nil {
		t.Fatalf("empty query dropped %v", got)
	}
}
