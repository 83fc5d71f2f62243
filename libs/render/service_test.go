package render

import (
	"encoding/json"
	"testing"
)

// An entity stored before service became a boolean holds the service's id string; it must read
// (non-empty id: true, empty: null) and be written back as the boolean, and the new forms read
// as they are. A number is no form the field ever had.
func TestServiceReadsOldAndNewForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"id":"a16z","service":"a16z-crypto"}`, `true`},
		{`{"id":"a16z","service":""}`, `null`},
		{`{"id":"a16z","service":true}`, `true`},
		{`{"id":"a16z","service":false}`, `null`},
		{`{"id":"a16z","service":null}`, `null`},
		{`{"id":"a16z"}`, `null`},
	} {
		var e Entity
		if err := json.Unmarshal([]byte(c.in), &e); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if string(got["service"]) != c.want {
			t.Errorf("%s: service written %s, want %s", c.in, got["service"], c.want)
		}
	}
	var e Entity
	if err := json.Unmarshal([]byte(`{"service":5}`), &e); err == nil {
		t.Error("service 5 read without an error")
	}
}
