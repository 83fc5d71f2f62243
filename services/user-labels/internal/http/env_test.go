package http

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/chainintel/chainintel/services/user-labels/internal/store"
	"github.com/chainintel/chainintel/services/user-labels/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

const testSecret = "test-secret-0123456789"

// env is the real router over the real store on the package's test database.
type env struct {
	h      http.Handler
	signer *httpx.Signer
	store  *store.Store
	kicks  atomic.Int64
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, app.WithLabelCache(1<<30), app.WithLookupCache(1<<30))
}

// newEnvWith builds the env with the given service options.
func newEnvWith(t testing.TB, opts ...app.Option) *env {
	t.Helper()
	ev := &env{signer: httpx.NewSigner(testSecret)}
	ev.store = store.New(pgtest.Pool(t), store.OnOutbox(func() { ev.kicks.Add(1) }))
	e := httpx.NewEngine(httpx.EngineOptions{Service: "user-labels", MaxBodyBytes: MaxInternalBodyBytes})
	e.Use(httpx.IdentityMiddleware(ev.signer))
	Register(e, app.New(ev.store, app.NewChainTypes(nil), opts...))
	ev.h = e
	return ev
}

// newUser returns a fresh user id, so tests sharing the database never see each other's rows.
func newUser() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "user-" + hex.EncodeToString(b[:])
}

type resp struct {
	Status int
	Header http.Header
	Body   string
}

// do sends a request as user ("" sends none) with body (a string is sent as is, anything else as
// JSON, nil as no body).
func (ev *env) do(t testing.TB, user, method, path string, body any) resp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	var id *httpx.Identity
	if user != "" {
		i := identity(user)
		id = &i
	}
	return ev.doAs(t, id, method, path, rd)
}

// identity is user's identity through one key; every test user is in the same org, so isolation
// tests show that org members do not share labels.
func identity(user string) httpx.Identity {
	return httpx.Identity{KeyID: "key-" + user, UserID: user, OrgID: "org-shared", Role: httpx.RoleOrgMember, Tier: "api"}
}

func nowFn() time.Time { return time.Now() }

// doAs sends a request signed for id (none when nil).
func (ev *env) doAs(t testing.TB, id *httpx.Identity, method, path string, rd io.Reader) resp {
	t.Helper()
	req := httptest.NewRequest(method, path, rd)
	if id != nil {
		ev.signer.Sign(req.Header, *id, time.Now())
	}
	w := httptest.NewRecorder()
	ev.h.ServeHTTP(w, req)
	return resp{Status: w.Code, Header: w.Header(), Body: w.Body.String()}
}

// expect checks the status and that the body is the JSON want (compared as values, so key order
// and spacing do not matter).
func expect(t testing.TB, r resp, status int, want string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	var got, exp any
	if err := json.Unmarshal([]byte(r.Body), &got); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, r.Body)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("bad expectation %s: %v", want, err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("body\n got: %s\nwant: %s", compact(r.Body), compact(want))
	}
}

// expectError checks the status and the whole error body.
func expectError(t testing.TB, r resp, status int, msg string) {
	t.Helper()
	b, _ := json.Marshal(httpx.ErrorBody{Error: msg})
	expect(t, r, status, string(b))
}

func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// decode decodes r's body into v.
func decode[T any](t testing.TB, r resp) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.Body), &v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return v
}

// evmAddr returns a distinct valid lower-case EVM address for n.
func evmAddr(n int) string { return fmt.Sprintf("0x%040x", n+1) }

// evmAddrs returns n distinct EVM addresses starting at from.
func evmAddrs(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = evmAddr(from + i)
	}
	return out
}

// jsonList renders addresses as a JSON array.
func jsonList(addrs []string) string {
	b, _ := json.Marshal(addrs)
	return string(b)
}

// Real addresses of the other chain types.
const (
	btcAddr   = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"
	btcUpper  = "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4"
	btcLower  = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
	tronAddr  = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
	tronHex   = "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"
	solAddr   = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	dogeAddr  = "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L"
	tonFriend = "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N"
	tonRaw    = "0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8"
)

// tonWithSlash returns a valid user-friendly TON address in standard base64 that contains "/".
func tonWithSlash(t testing.TB) string {
	t.Helper()
	for i := 0; i < 1<<16; i++ {
		var b [36]byte
		b[0], b[1] = 0x11, 0x00
		b[2], b[3] = byte(i>>8), byte(i)
		b[4] = 0xff
		crc := crc16(b[:34])
		b[34], b[35] = byte(crc>>8), byte(crc)
		s := base64.StdEncoding.EncodeToString(b[:])
		if strings.Contains(s, "/") && !strings.Contains(s, "+") {
			return s
		}
	}
	t.Fatal("no TON address with a slash")
	return ""
}

func crc16(data []byte) uint16 {
	var crc uint16
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
