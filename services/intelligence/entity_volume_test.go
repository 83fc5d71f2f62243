package intelligence

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/chainintel/chainintel/services/intelligence/internal/transfersclient"
	"github.com/chainintel/chainintel/services/intelligence/migrations"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// volumeWorld is a known world: entity acme with addresses h1 and h2, entity other with o1, and
// transfers in two blocks, one of them between h1 and h2.
type volumeWorld struct {
	h1, h2, o1, c1, c2 string
	transfers          []*eventsv1.Transfer
}

func newVolumeWorld() volumeWorld {
	w := volumeWorld{h1: addr(0xa1), h2: addr(0xa2), o1: addr(0x01), c1: addr(0xc1), c2: addr(0xc2)}
	tr := func(id, block, from, to string, ms int64, v float64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", BlockHash: block, From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(v), Amount: "1"}
	}
	w.transfers = []*eventsv1.Transfer{
		tr("a", "0xb1", w.c1, w.h1, 1000, 100), // into acme
		tr("b", "0xb2", w.h1, w.h2, 2000, 30),  // inside acme
		tr("c", "0xb1", w.h2, w.c2, 3000, 20),  // out of acme
		tr("d", "0xb1", w.h1, w.h1, 4000, 5),   // an address to itself
		tr("e", "0xb1", w.o1, w.h1, 5000, 7),   // other to acme
	}
	return w
}

// importAttribution (re-)imports the curated attribution of the world's three addresses.
func (w volumeWorld) importAttribution(t *testing.T, h1, h2, o1 string) {
	t.Helper()
	a := func(address, entity string) string {
		return `{"chainType":"evm","address":"` + address + `","entity":"` + entity + `","label":"x"}`
	}
	_, err := ImportCurated(context.Background(), testConfig(t), strings.NewReader(`{"entities":[{"id":"acme","name":"Acme","type":"cex"},
		{"id":"other","name":"Other","type":"cex"}],"addresses":[`+a(w.h1, h1)+`,`+a(w.h2, h2)+`,`+a(w.o1, o1)+`]}`))
	if err != nil {
		t.Fatal(err)
	}
}

// summaries renders both entities' summaries (through the router) and transfer counts.
func summaries(t *testing.T, st *store.Store) string {
	t.Helper()
	api := newTestAPI(t, nil, nil)
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	var b strings.Builder
	for _, id := range []string{"acme", "other"} {
		code, body := api.do(t, "GET", "/intelligence/entity/"+id+"/summary", "", caller)
		if code != 200 {
			t.Fatalf("summary of %s: %d %s", id, code, body)
		}
		a, err := st.EntityActivity(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s transfers=%d\n", compact(body), a.TransferCount)
	}
	return b.String()
}

func summaryLine(id string, n int, volume float64, first, last string, transfers int) string {
	q := func(s string) string {
		if s == "" {
			return "null"
		}
		return `"` + s + `"`
	}
	return fmt.Sprintf(`{"entityId":"%s","numAddresses":%d,"balanceUsd":0,"volumeUsd":%v,"firstTx":%s,"lastTx":%s} transfers=%d`+"\n",
		id, n, volume, q(first), q(last), transfers)
}

// An operator entity's summary counts each transfer touching its attributed addresses once: the
// transfer between two of its addresses too (not once out and once in), whether the attribution
// came before or after the transfers. A relabel moving one of those addresses to another entity
// makes the transfer count once for each; moving it back, or both addresses in one statement,
// follows too. The same events delivered twice change nothing, and a reorg takes the internal
// transfer back out (once, however often it is delivered).
func TestEntityVolumeCountsEachTransferOnce(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := store.New(pool)
	h := events.Handlers{Store: st}
	w := newVolumeWorld()
	const t1, t2, t3, t5 = "1970-01-01T00:00:01Z", "1970-01-01T00:00:02Z", "1970-01-01T00:00:03Z", "1970-01-01T00:00:05Z"
	// acme (h1, h2): a, b, c, d, e = 162 in 5 transfers (the per-address sum was 192 in 6);
	// other (o1): e.
	initial := summaryLine("acme", 2, 162, t1, t5, 5) + summaryLine("other", 1, 7, t5, t5, 1)

	for _, attributedFirst := range []bool{true, false} {
		resetDB(t)
		if attributedFirst {
			w.importAttribution(t, "acme", "acme", "other")
		}
		for range 2 {
			if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, w.transfers...)); err != nil {
				t.Fatal(err)
			}
		}
		if !attributedFirst {
			w.importAttribution(t, "acme", "acme", "other")
		}
		if got := summaries(t, st); got != initial {
			t.Fatalf("attributed first %v:\n got %s\nwant %s", attributedFirst, got, initial)
		}
	}

	steps := []struct {
		what       string
		h1, h2, o1 string
		want       string
	}{
		// acme (h1): a, b, d, e; other (o1, h2): b, c, e. b counts once for each.
		{"h2 moved to other", "acme", "other", "other",
			summaryLine("acme", 1, 142, t1, t5, 4) + summaryLine("other", 2, 57, t2, t5, 3)},
		{"h2 moved back", "acme", "acme", "other", initial},
		// Both acme addresses move in one statement: everything is other's, e now inside it.
		{"h1 and h2 moved to other", "other", "other", "other",
			summaryLine("acme", 0, 0, "", "", 0) + summaryLine("other", 3, 162, t1, t5, 5)},
		// acme (o1) and other (h1, h2) swap in one statement.
		{"swapped", "other", "other", "acme",
			summaryLine("acme", 1, 7, t5, t5, 1) + summaryLine("other", 2, 162, t1, t5, 5)},
		{"back to the start", "acme", "acme", "other", initial},
	}
	for _, s := range steps {
		w.importAttribution(t, s.h1, s.h2, s.o1)
		if got := summaries(t, st); got != s.want {
			t.Fatalf("%s:\n got %s\nwant %s", s.what, got, s.want)
		}
	}

	// A reorg orphaning b's block takes it back; delivered twice, once.
	reorg := []eventbus.Message[*eventsv1.Reorg]{{Topic: eventsv1.TopicReorgs, Msg: &eventsv1.Reorg{Chain: "ethereum",
		Orphaned: []*eventsv1.Reorg_Block{{Number: 2, Hash: "0xb2"}}}}}
	afterReorg := summaryLine("acme", 2, 132, t1, t5, 4) + summaryLine("other", 1, 7, t5, t5, 1)
	for range 2 {
		if err := h.Reorgs(ctx, reorg); err != nil {
			t.Fatal(err)
		}
		if got := summaries(t, st); got != afterReorg {
			t.Fatalf("after the reorg:\n got %s\nwant %s", got, afterReorg)
		}
	}
	// A relabel after the reorg moves nothing the reorg took back: h2's first transfer is c's
	// again, b's time went with it.
	w.importAttribution(t, "acme", "other", "other")
	if got, want := summaries(t, st), summaryLine("acme", 1, 112, t1, t5, 3)+summaryLine("other", 2, 27, t3, t5, 2); got != want {
		t.Fatalf("relabel after the reorg:\n got %s\nwant %s", got, want)
	}
}

// volumeUserLabels holds one shareable user entity over the given addresses.
type volumeUserLabels struct{ addrs []string }

const volumeUserEntity = "5a1e0c3d-2b4f-4e6a-8c9d-0f1e2d3c4b5a"

func (f volumeUserLabels) Lookup(context.Context, []ulclient.AddressRef) (ulclient.Lookup, error) {
	return ulclient.Lookup{Labels: map[string]ulclient.Label{}, Entities: map[string][]ulclient.EntityRef{}}, nil
}
func (f volumeUserLabels) Entity(_ context.Context, id string) (ulclient.UserEntity, error) {
	// user-labels reads the id as a UUID, whatever its case, and answers the stored one.
	if !strings.EqualFold(id, volumeUserEntity) {
		return ulclient.UserEntity{}, ulclient.ErrNotFound
	}
	return ulclient.UserEntity{ID: volumeUserEntity, Name: "mine", Type: "user", Addresses: map[string][]string{"evm": f.addrs}}, nil
}
func (f volumeUserLabels) SharedEntity(ctx context.Context, id string) (ulclient.UserEntity, error) {
	return ulclient.UserEntity{}, ulclient.ErrNotFound
}
func (f volumeUserLabels) Additions(context.Context, string) (map[string][]string, error) {
	return map[string][]string{}, nil
}
func (f volumeUserLabels) Search(context.Context, string, int, int) (ulclient.SearchResult, error) {
	return ulclient.SearchResult{}, nil
}

// volumeTransfers answers transfers' activity of a set of addresses as transfers defines it
// (its store's Activity: each transfer touching one of them once, even between two of them),
// over the world's transfers.
type volumeTransfers struct{ transfers []*eventsv1.Transfer }

func (f volumeTransfers) Activity(_ context.Context, refs []transfersclient.AddressRef) (transfersclient.Activity, error) {
	in := map[string]bool{}
	for _, r := range refs {
		in[r.Address] = true
	}
	var a transfersclient.Activity
	for _, t := range f.transfers {
		if !in[t.From] && !in[t.To] {
			continue
		}
		a.VolumeUSD += *t.HistoricalUsd
		a.TransferCount++
		at := time.UnixMilli(t.BlockTimeMs).UTC()
		if a.FirstTx == nil || at.Before(*a.FirstTx) {
			a.FirstTx = &at
		}
		if a.LastTx == nil || at.After(*a.LastTx) {
			a.LastTx = &at
		}
	}
	return a, nil
}

// A user entity and an operator entity over the same addresses have the same summary figures.
func TestUserAndOperatorEntityVolumesAgree(t *testing.T) {
	ctx := context.Background()
	resetDB(t)
	h := events.Handlers{Store: store.New(pgtest.Pool(t))}
	w := newVolumeWorld()
	w.importAttribution(t, "acme", "acme", "other")
	if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, w.transfers...)); err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, volumeUserLabels{addrs: []string{w.h1, w.h2}}, volumeTransfers{transfers: w.transfers})
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	_, op := api.do(t, "GET", "/intelligence/entity/acme/summary", "", caller)
	code, user := api.do(t, "GET", "/intelligence/entity/"+volumeUserEntity+"/summary", "", caller)
	if code != 200 {
		t.Fatalf("user entity summary: %d %s", code, user)
	}
	want := `{"entityId":"%s","numAddresses":2,"balanceUsd":0,"volumeUsd":162,"firstTx":"1970-01-01T00:00:01Z","lastTx":"1970-01-01T00:00:05Z"}`
	assertJSON(t, "operator entity", op, fmt.Sprintf(want, "acme"))
	assertJSON(t, "user entity", user, fmt.Sprintf(want, volumeUserEntity))
}

// A user entity named in upper case answers its canonical (lower-case) id, as /balances/entity
// and /user/entities do, on the summary and on the entity route.
func TestUserEntityAnswersCanonicalID(t *testing.T) {
	ctx := context.Background()
	resetDB(t)
	h := events.Handlers{Store: store.New(pgtest.Pool(t))}
	w := newVolumeWorld()
	if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, w.transfers...)); err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, volumeUserLabels{addrs: []string{w.h1}}, volumeTransfers{transfers: w.transfers})
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	upper := strings.ToUpper(volumeUserEntity)
	code, body := api.do(t, "GET", "/intelligence/entity/"+upper+"/summary", "", caller)
	if code != 200 {
		t.Fatalf("summary: %d %s", code, body)
	}
	assertJSON(t, "summary", body, `{"entityId":"`+volumeUserEntity+`","numAddresses":1,"balanceUsd":0,"volumeUsd":142,
		"firstTx":"1970-01-01T00:00:01Z","lastTx":"1970-01-01T00:00:05Z"}`)
	code, body = api.do(t, "GET", "/intelligence/entity/"+upper, "", caller)
	if code != 200 {
		t.Fatalf("entity: %d %s", code, body)
	}
	assertJSON(t, "entity", body, `{"id":"`+volumeUserEntity+`","name":"mine","note":"","type":"user","service":null,
		"addresses":{"evm":["`+w.h1+`"]},"linkShareable":false,"populatedTags":[]}`)
}

// Transfer batches and relabels running concurrently end with every entity's figures those of
// its final addresses over all the transfers: the lock a relabel takes (the one batches take
// shared) keeps a batch that read the old attributions from committing after the relabel moved
// the pairs it counted. The window is narrow, so a run may pass without hitting it; it cannot
// pass with figures that drifted.
func TestEntityVolumeUnderConcurrentRelabels(t *testing.T) {
	ctx := context.Background()
	resetDB(t)
	st := store.New(pgtest.Pool(t))
	h := events.Handlers{Store: st}
	var addrs []string
	for i := range 10 {
		addrs = append(addrs, addr(0xe00+i))
	}
	ents := []string{"acme", "other"}
	relabel := func(round int) map[string]string {
		owner := map[string]string{}
		var parts []string
		for i, a := range addrs[:8] { // the last two stay unattributed
			owner[a] = ents[(i*7+round*3+i*round)%2]
			parts = append(parts, `{"chainType":"evm","address":"`+a+`","entity":"`+owner[a]+`","label":"x"}`)
		}
		if _, err := ImportCurated(ctx, testConfig(t), strings.NewReader(`{"entities":[{"id":"acme","name":"Acme","type":"cex"},
			{"id":"other","name":"Other","type":"cex"}],"addresses":[`+strings.Join(parts, ",")+`]}`)); err != nil {
			t.Error(err)
		}
		return owner
	}
	owner := relabel(0)
	var all []*eventsv1.Transfer
	const batches, perBatch = 40, 15
	for b := range batches {
		for i := range perBatch {
			n := b*perBatch + i
			all = append(all, &eventsv1.Transfer{Id: fmt.Sprint("t", n), Chain: "ethereum", BlockHash: fmt.Sprint("0xb", b),
				From: addrs[n%10], To: addrs[(n*3+1)%10], BlockTimeMs: int64(1000 * (n + 1)), HistoricalUsd: usd(float64(n%13 + 1)), Amount: "1"})
		}
	}
	done := make(chan map[string]string)
	go func() {
		var last map[string]string
		for r := 1; r <= 12; r++ {
			last = relabel(r)
		}
		done <- last
	}()
	for b := range batches {
		if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, all[b*perBatch:(b+1)*perBatch]...)); err != nil {
			t.Fatal(err)
		}
	}
	if last := <-done; last != nil {
		owner = last
	}
	for _, e := range ents {
		var want float64
		var n int64
		for _, tr := range all {
			if owner[tr.From] == e || owner[tr.To] == e {
				want += *tr.HistoricalUsd
				n++
			}
		}
		a, err := st.EntityActivity(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if a.VolumeUSD != want || a.TransferCount != n {
			t.Errorf("%s: volume %v in %d transfers, want %v in %d", e, a.VolumeUSD, a.TransferCount, want, n)
		}
	}
}

// Migration 13 counts the pairs of the transfers the block journal holds, not orphaned, and the
// internal figures from them: what the consumers keep for those transfers.
func TestPairActivityMigrationCountsTheJournal(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	resetDB(t)
	h := events.Handlers{Store: store.New(pool)}
	w := newVolumeWorld()
	w.importAttribution(t, "acme", "acme", "other")
	if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, w.transfers...)); err != nil {
		t.Fatal(err)
	}
	w.importAttribution(t, "acme", "other", "acme")
	if err := h.Reorgs(ctx, []eventbus.Message[*eventsv1.Reorg]{{Topic: eventsv1.TopicReorgs, Msg: &eventsv1.Reorg{Chain: "ethereum",
		Orphaned: []*eventsv1.Reorg_Block{{Number: 3, Hash: "0xb2"}}}}}); err != nil {
		t.Fatal(err)
	}
	want := heuristicInputs(t, pool)
	m, err := fs.ReadFile(migrations.FS, "00013_pair_activity.sql")
	if err != nil {
		t.Fatal(err)
	}
	text := string(m)
	from, to := strings.Index(text, "INSERT INTO intel.pair_activity"), strings.Index(text, "-- Addresses whose entity")
	if from < 0 || to < from {
		t.Fatal("the migration's counting statements not found")
	}
	if _, err := pool.Exec(ctx, `TRUNCATE intel.pair_activity, intel.entity_internal`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, text[from:to]); err != nil {
		t.Fatal(err)
	}
	if got := heuristicInputs(t, pool); got != want || !strings.Contains(got, "acme 7 1") {
		t.Fatalf("counted by the migration:\n%s\nwant (as consumed):\n%s", got, want)
	}
}
