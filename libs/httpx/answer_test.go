package httpx

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

type answerRow struct {
	ID     string     `json:"id"`
	Value  float64    `json:"value"`
	USD    *float64   `json:"usd,omitempty"`
	Name   string     `json:"name"`
	Flag   bool       `json:"flag"`
	N      int64      `json:"n"`
	Nested *answerRow `json:"nested,omitempty"`
	List   []string   `json:"list"`
	Any    any        `json:"any"`
}

// Answer must write what encoding/json (gin's c.JSON) wrote: clients of the public API compare
// documents, not just values, now and then.
func TestAnswerMatchesEncodingJSON(t *testing.T) {
	usd := 12.5
	values := []any{
		answerRow{ID: "a<b>&c", Value: 1e-7, USD: &usd, Name: "ünïcødé \u2028 \u2029 \x00 \t\"q\"", List: []string{}},
		answerRow{ID: "bad utf-8 \xff\xfe, 1e-07 e-08", Name: "\\\"e-09", Value: 1e21, N: math.MinInt64, Nested: &answerRow{Value: -0.000001}},
		[]answerRow{{Value: math.MaxFloat64}, {Value: math.SmallestNonzeroFloat64}, {Value: 123456789.123456789}},
		[]any{1.0, []float64{0, 1e20, 1e-6, 123.456}, nil, []string{"\b\f\u0008", "\\u000c"}},
		struct {
			Transfers []answerRow `json:"transfers"`
			Count     int         `json:"count"`
		}{Transfers: nil, Count: 10000},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var floats []float64
	for range 2000 {
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		floats = append(floats, f, float64(rng.IntN(1_000_000))/float64(1+rng.IntN(1000)))
	}
	values = append(values, floats)
	for i, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		Answer(c, http.StatusOK, v)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
			t.Fatalf("value %d: status %d, content type %q", i, rec.Code, rec.Header().Get("Content-Type"))
		}
		if got := rec.Body.String(); got != string(want) {
			t.Errorf("value %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// FuzzAnswer: any string and number, Answer writes what encoding/json writes (strings that look
// like what asEncodingJSON rewrites stay as they are).
func FuzzAnswer(f *testing.F) {
	f.Add("1e-07", 1e-7, "e-0", 5e-9)
	f.Add(`"\"e-07`, -2.5e-8, `\\e-09`, 1e21)
	f.Add("plain", 0.0, "", -1e-300)
	f.Fuzz(func(t *testing.T, s1 string, x1 float64, s2 string, x2 float64) {
		if math.IsNaN(x1) || math.IsInf(x1, 0) || math.IsNaN(x2) || math.IsInf(x2, 0) {
			return
		}
		v := []any{answerRow{ID: s1, Value: x1, Name: s2, List: []string{s2 + s1}}, x2, []any{s1, x1}}
		want, err := json.Marshal(v)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		Answer(c, http.StatusOK, v)
		if got := rec.Body.String(); got != string(want) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}
