package outbox

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

//go:embed testdata/*.sql
var sqlFS embed.FS

func query(name string) string {
	b, err := sqlFS.ReadFile("testdata/" + name + ".sql")
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := pool.Exec(ctx, query("schema"))
		return err
	}))
}

const (
	topicNames = "test.names.v1"
	topicCount = "test.counts.v1"
)

var (
	quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
	msgs  = Messages{
		topicNames: func() proto.Message { return &wrapperspb.StringValue{} },
		topicCount: func() proto.Message { return &wrapperspb.Int64Value{} },
	}
)

// table returns the test outbox, emptied.
func table(t *testing.T) Table {
	t.Helper()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(context.Background(), query("truncate")); err != nil {
		t.Fatal(err)
	}
	return NewTable(pool, pgx.Identifier{"relaytest", "outbox"})
}

// write adds one row per message, as a service's store does in its transaction.
func write(t *testing.T, topic string, keys []string, ms ...proto.Message) {
	t.Helper()
	payloads := make([][]byte, len(ms))
	for i, m := range ms {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		payloads[i] = b
	}
	if _, err := pgtest.Pool(t).Exec(context.Background(), query("insert"), topic, keys, payloads); err != nil {
		t.Fatal(err)
	}
}

func pending(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := pgtest.Pool(t).QueryRow(context.Background(), query("pending")).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func rowIDs(t *testing.T) []string {
	t.Helper()
	rows, err := pgtest.Pool(t).Query(context.Background(), query("ids"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// recorder keeps what it is given to publish, failing while fail is set.
type recorder struct {
	mu    sync.Mutex
	fail  bool
	calls int
	got   []eventbus.Event
}

func (r *recorder) Publish(_ context.Context, evs ...eventbus.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.fail {
		return errors.New("broker unreachable")
	}
	r.got = append(r.got, evs...)
	return nil
}

func (r *recorder) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.got))
	for i, e := range r.got {
		out[i] = e.ID
	}
	return out
}

// A kicked relay publishes every row through Kafka, in order of writing, keyed as written, with
// the row's event id, decoded as its topic's message; the rows are then marked sent and pruned
// after the retention.
func TestRelayPublishesRowsInOrderThroughKafka(t *testing.T) {
	tb := table(t)
	brokers := kafkatest.Broker(t, topicNames)
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	t.Cleanup(func() { _ = pub.Close() })
	// A long poll interval: only the kick can make these events arrive quickly.
	relay := NewRelay(tb, pub, msgs, Options{PollInterval: time.Hour, BatchSize: 2, Logger: quiet})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	var mu sync.Mutex
	var got []eventbus.Message[*wrapperspb.StringValue]
	cons := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "test", Topic: topicNames, Logger: quiet},
		func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(_ context.Context, b []eventbus.Message[*wrapperspb.StringValue]) error {
			mu.Lock()
			got = append(got, b...)
			mu.Unlock()
			return nil
		})
	cctx, ccancel := context.WithCancel(context.Background())
	cdone := make(chan error, 1)
	go func() { cdone <- cons.Run(cctx) }()
	t.Cleanup(func() { ccancel(); <-cdone })

	// One key, so the records share a partition and keep their order.
	keys := []string{"k", "k", "k", "k", "k"}
	write(t, topicNames, keys, wrapperspb.String("a"), wrapperspb.String("b"), wrapperspb.String("c"),
		wrapperspb.String("d"), wrapperspb.String("e"))
	relay.Kick()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(keys) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events arrived", n, len(keys))
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	var values, ids []string
	for _, m := range got {
		if m.Key != "k" || m.EventType != "google.protobuf.StringValue" {
			t.Errorf("event key %q type %q", m.Key, m.EventType)
		}
		values, ids = append(values, m.Msg.GetValue()), append(ids, m.EventID)
	}
	mu.Unlock()
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(values, want) {
		t.Fatalf("values %v, want %v", values, want)
	}
	if want := rowIDs(t); !slices.Equal(ids, want) {
		t.Fatalf("event ids %v, want the rows' %v", ids, want)
	}
	if n := pending(t); n != 0 {
		t.Fatalf("%d rows left unsent", n)
	}
	bg := context.Background()
	if n, err := tb.PruneOutbox(bg, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("pruned %d rows sent within the retention (%v)", n, err)
	}
	if n, err := tb.PruneOutbox(bg, time.Now().Add(time.Minute)); err != nil || n != int64(len(keys)) {
		t.Fatalf("pruned %d %v, want %d", n, err, len(keys))
	}
}

// When publishing fails the rows stay unsent, and a later drain sends each once.
func TestFailedPublishLeavesRowsPending(t *testing.T) {
	tb := table(t)
	write(t, topicNames, []string{"a", "b"}, wrapperspb.String("1"), wrapperspb.String("2"))
	write(t, topicCount, []string{"c"}, wrapperspb.Int64(3))
	rec := &recorder{fail: true}
	relay := NewRelay(tb, rec, msgs, Options{Logger: quiet})
	bg := context.Background()
	if err := relay.Drain(bg); err == nil || rec.calls != 1 {
		t.Fatalf("drain with a failing broker: %v after %d calls", err, rec.calls)
	}
	if n := pending(t); n != 3 {
		t.Fatalf("pending after a failed publish: %d, want 3", n)
	}
	rec.fail = false
	if err := relay.Drain(bg); err != nil {
		t.Fatal(err)
	}
	if n := pending(t); n != 0 {
		t.Fatalf("pending after a good drain: %d", n)
	}
	if got, want := rec.ids(), rowIDs(t); !slices.Equal(got, want) {
		t.Fatalf("published %v, want %v", got, want)
	}
	c, ok := rec.got[2].Msg.(*wrapperspb.Int64Value)
	if !ok || c.GetValue() != 3 || rec.got[2].Topic != topicCount || rec.got[2].Key != "c" {
		t.Fatalf("third event %+v", rec.got[2])
	}
}

// A row of a topic the relay does not publish stops it there, naming the row and the topics it
// does publish; the rows before it in the batch are not published either.
func TestRowOfAnotherTopicFailsTheRelay(t *testing.T) {
	tb := table(t)
	write(t, topicNames, []string{"a"}, wrapperspb.String("1"))
	write(t, "test.other.v1", []string{"b"}, wrapperspb.String("2"))
	rec := &recorder{}
	err := NewRelay(tb, rec, msgs, Options{Logger: quiet}).Drain(context.Background())
	want := fmt.Sprintf(`has topic "test.other.v1"; only %s and %s are relayed`, topicCount, topicNames)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("drain: %v, want an error saying %q", err, want)
	}
	if rec.calls != 0 || pending(t) != 2 {
		t.Fatalf("%d publishes, %d rows pending", rec.calls, pending(t))
	}
	one := NewRelay(tb, rec, Messages{topicNames: msgs[topicNames]}, Options{Logger: quiet})
	if err := one.Drain(context.Background()); err == nil || !strings.Contains(err.Error(), "only "+topicNames+" is relayed") {
		t.Fatalf("drain: %v", err)
	}
}

// Relays draining the same outbox at once publish every row exactly once between them.
func TestConcurrentRelaysPublishEachRowOnce(t *testing.T) {
	tb := table(t)
	const rows = 400
	keys := make([]string, rows)
	ms := make([]proto.Message, rows)
	for i := range keys {
		keys[i], ms[i] = fmt.Sprint(i), wrapperspb.Int64(int64(i))
	}
	write(t, topicCount, keys, ms...)
	recs := make([]*recorder, 4)
	var wg sync.WaitGroup
	errs := make(chan error, len(recs))
	for i := range recs {
		recs[i] = &recorder{}
		relay := NewRelay(tb, recs[i], msgs, Options{BatchSize: 7, Logger: quiet})
		wg.Go(func() { errs <- relay.Drain(context.Background()) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var all []string
	for _, r := range recs {
		all = append(all, r.ids()...)
	}
	slices.Sort(all)
	want := rowIDs(t)
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Fatalf("published %d events for %d rows (duplicates or losses)", len(all), len(want))
	}
	if n := pending(t); n != 0 {
		t.Fatalf("%d rows left unsent", n)
	}
}

// Stopping the relay makes one last pass, so rows written just before are not left behind:
// with its context ended from the start, only that pass can publish them.
func TestStopPublishesWhatIsLeft(t *testing.T) {
	tb := table(t)
	write(t, topicNames, []string{"late"}, wrapperspb.String("late"))
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := NewRelay(tb, rec, msgs, Options{PollInterval: time.Hour, Logger: quiet}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pending(t); n != 0 || len(rec.ids()) != 1 {
		t.Fatalf("%d rows left after stop, %d published", n, len(rec.ids()))
	}
}

// Write kicks only after a committed transaction that wrote rows; a failed one leaves nothing.
func TestWriteKicksAfterCommit(t *testing.T) {
	table(t)
	pool := pgtest.Pool(t)
	bg := context.Background()
	kicks := 0
	kick := func() { kicks++ }
	insert := func(tx pgx.Tx) error {
		_, err := tx.Exec(bg, query("insert"), topicNames, []string{"k"}, [][]byte{{}})
		return err
	}
	if err := Write(bg, pool, "add", func(tx pgx.Tx) (bool, error) { return true, insert(tx) }, kick); err != nil || kicks != 1 || pending(t) != 1 {
		t.Fatalf("write: %v, %d kicks, %d rows", err, kicks, pending(t))
	}
	if err := Write(bg, pool, "nothing", func(pgx.Tx) (bool, error) { return false, nil }, kick); err != nil || kicks != 1 {
		t.Fatalf("write of no rows: %v, %d kicks", err, kicks)
	}
	err := Write(bg, pool, "broken", func(tx pgx.Tx) (bool, error) {
		if err := insert(tx); err != nil {
			return false, err
		}
		return true, errors.New("refused")
	}, kick)
	if err == nil || err.Error() != "broken: refused" || kicks != 1 || pending(t) != 1 {
		t.Fatalf("failed write: %v, %d kicks, %d rows", err, kicks, pending(t))
	}
}

// NewTable quotes the table's name: an outbox whose schema and table names hold a quote, a
// semicolon, spaces and capitals is claimed, marked and pruned as any other, and the name is
// never read as SQL (the table next to it stays).
func TestNewTableQuotesTheName(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	name := pgx.Identifier{`Odd "Schema"`, `out; DROP TABLE relaytest.outbox; --`}
	q := name.Sanitize()
	if _, err := pool.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{name[0]}.Sanitize()+`;
CREATE TABLE `+q+` (LIKE relaytest.outbox INCLUDING DEFAULTS)`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = pool.Exec(ctx, `DROP SCHEMA `+pgx.Identifier{name[0]}.Sanitize()+` CASCADE`)
	})
	b, _ := proto.Marshal(wrapperspb.String("x"))
	if _, err := pool.Exec(ctx, `INSERT INTO `+q+` (topic, key, payload) VALUES ($1, 'k', $2)`, topicNames, b); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	tb := NewTable(pool, name)
	if err := NewRelay(tb, rec, msgs, Options{Logger: quiet}).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rec.got) != 1 || rec.got[0].Key != "k" {
		t.Fatalf("published %+v, want the one row", rec.got)
	}
	n, err := tb.PruneOutbox(ctx, time.Now().Add(time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("prune: %d %v, want 1 row", n, err)
	}
	if _, err := pool.Exec(ctx, query("truncate")); err != nil {
		t.Fatalf("the test outbox next to it: %v", err)
	}
}

// topicLog is one topic as two relays publish to it: the events in the order they arrived.
type topicLog struct {
	mu  sync.Mutex
	got []eventbus.Event
}

func (l *topicLog) add(evs []eventbus.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, evs...)
}

func (l *topicLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

// waitingSQL says whether a session waits for the relay lock of the outbox table named $1.
const waitingSQL = `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
	AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND (classid::bigint << 32 | objid::bigint) = hashtextextended('libs/outbox ' || $1, 0))`

// logPublisher appends to log; when hold is set, its first publish waits for hold to return.
type logPublisher struct {
	log   *topicLog
	hold  func() error
	calls int
}

func (p *logPublisher) Publish(_ context.Context, evs ...eventbus.Event) error {
	p.calls++
	if p.calls == 1 && p.hold != nil {
		if err := p.hold(); err != nil {
			return err
		}
	}
	p.log.add(evs)
	return nil
}

// Two relays draining a backlog where each key has rows in many chunks leave each key's newest
// row last on the topic. Relay A's first chunk is held until relay B has either drained what it
// could (every later chunk, jumping ahead of A's older one) or is seen waiting for the relay
// lock, so the test fails whenever a second relay can publish while a chunk is in flight.
func TestTwoRelaysKeepEachKeysOrder(t *testing.T) {
	tb := table(t)
	const keysN, perKey = 5, 40
	var keys []string
	var ms []proto.Message
	for i := range keysN * perKey {
		keys, ms = append(keys, fmt.Sprint("k", i%keysN)), append(ms, wrapperspb.Int64(int64(i)))
	}
	write(t, topicCount, keys, ms...)
	log := &topicLog{}
	ctx := context.Background()
	bStarted, bDone := make(chan struct{}), make(chan struct{})
	pubB := &logPublisher{log: log}
	pubA := &logPublisher{log: log, hold: func() error {
		close(bStarted)
		deadline := time.Now().Add(30 * time.Second)
		for {
			select {
			case <-bDone:
				return nil
			default:
			}
			var waiting bool
			if err := pgtest.Pool(t).QueryRow(ctx, waitingSQL, tb.name).Scan(&waiting); err != nil {
				return err
			}
			if waiting {
				return nil
			}
			if time.Now().After(deadline) {
				return errors.New("relay B neither finished nor waited for the relay lock")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}}
	const batch = 7
	errs := make(chan error, 2)
	go func() { errs <- NewRelay(tb, pubA, msgs, Options{BatchSize: batch, Logger: quiet}).Drain(ctx) }()
	<-bStarted
	go func() {
		errs <- NewRelay(tb, pubB, msgs, Options{BatchSize: batch, Logger: quiet}).Drain(ctx)
		close(bDone)
	}()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	<-bDone
	if pubB.calls == 0 {
		t.Fatal("relay B published nothing; the test did not race two relays")
	}
	last := map[string]int64{}
	for _, e := range log.got {
		last[e.Key] = e.Msg.(*wrapperspb.Int64Value).GetValue()
	}
	for k := range keysN {
		key := fmt.Sprint("k", k)
		if want := int64((perKey-1)*keysN + k); last[key] != want {
			t.Errorf("last event of %s is row %d, want the newest, %d", key, last[key], want)
		}
	}
	if n := pending(t); n != 0 || len(log.got) != keysN*perKey {
		t.Fatalf("%d events published, %d rows pending", len(log.got), n)
	}
}
