package store

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var (
	//go:embed sql/entity_tags_claim.sql
	entityTagsClaimSQL string
	//go:embed sql/entity_tags_compute.sql
	entityTagsComputeSQL string
	//go:embed sql/entity_tags_store.sql
	entityTagsStoreSQL string
	//go:embed sql/entity_tags_bump.sql
	entityTagsBumpSQL string
	//go:embed sql/entity_tags_release.sql
	entityTagsReleaseSQL string
	//go:embed sql/entity_tags_backoff.sql
	entityTagsBackoffSQL string
	//go:embed sql/entity_tags_succeeded.sql
	entityTagsSucceededSQL string
)

// TagsClaimLease is how long a refresh round's claim keeps other refreshers off its entities. It
// outlives any round, so replicas do not recompute each other's entities; entities a refresher
// died holding wait that long.
const TagsClaimLease = 10 * time.Minute

// storedTag is one element of intel.entities.populated_tags (sql/entity_tags_update.sql).
type storedTag struct {
	ID              string `json:"id"`
	Label           string `json:"label"`
	Rank            int    `json:"rank"`
	DisablePage     bool   `json:"disablePage"`
	ExcludeEntities bool   `json:"excludeEntities"`
	Chain           string `json:"chain"`
	Params          string `json:"params"`
}

func decodeTags(js []byte) ([]attribution.PopulatedTag, error) {
	if len(js) == 0 {
		return nil, nil
	}
	var ts []storedTag
	if err := json.Unmarshal(js, &ts); err != nil {
		return nil, fmt.Errorf("populated tags: %w", err)
	}
	out := make([]attribution.PopulatedTag, len(ts))
	for i, t := range ts {
		out[i] = attribution.PopulatedTag{Tag: attribution.Tag{ID: t.ID, Label: t.Label, Rank: t.Rank, DisablePage: t.DisablePage,
			ExcludeEntities: t.ExcludeEntities, Chain: t.Chain}, Params: t.Params}
	}
	return out, nil
}

// TagsRetryFirst and TagsRetryMax bound the backoff of an entity whose recomputation failed: a
// later round retries it after TagsRetryFirst, doubled for each further consecutive failure up
// to TagsRetryMax, so an entity that always fails costs one attempt per backoff and never holds
// back the other dirty entities (WithTagsRetry changes them).
const (
	TagsRetryFirst = 30 * time.Second
	TagsRetryMax   = time.Hour
)

// TagsFailure is an entity a refresh round could not recompute or store, left to a later round.
type TagsFailure struct {
	EntityID string
	Failures int           // consecutive failed attempts, this one included
	Backoff  time.Duration // until the next attempt
	Err      error
}

// tagsOptions are the refresher's options (Store.tags).
type tagsOptions struct {
	retryFirst, retryMax time.Duration
	onFailure            func(TagsFailure)
	beforeCompute        func(ctx context.Context, entityID string) error
	beforeStore          func(ctx context.Context, entityIDs []string) error
}

// WithTagsRetry sets the backoff of an entity whose tags refresh failed (TagsRetryFirst,
// TagsRetryMax by default).
func WithTagsRetry(first, maxBackoff time.Duration) Option {
	return func(s *Store) { s.tags.retryFirst, s.tags.retryMax = first, maxBackoff }
}

// OnTagsFailure has f called (from the refreshing goroutine) for each entity a refresh round
// backs off, to log and count it.
func OnTagsFailure(f func(TagsFailure)) Option {
	return func(s *Store) { s.tags.onFailure = f }
}

// WithTagsComputeCheck has f called before each entity's tags are computed; an error fails that
// entity's computation as a failing query would. It is how tests make one entity fail.
func WithTagsComputeCheck(f func(ctx context.Context, entityID string) error) Option {
	return func(s *Store) { s.tags.beforeCompute = f }
}

// WithTagsStoreCheck has f called before each transaction storing computed tags, with its
// entities; an error fails that transaction as a failing statement would. It is how tests make
// a store fail.
func WithTagsStoreCheck(f func(ctx context.Context, entityIDs []string) error) Option {
	return func(s *Store) { s.tags.beforeStore = f }
}

// TagsRefresh says what one RefreshEntityTags round did.
type TagsRefresh struct {
	Entities    int // dirty entities claimed and recomputed (each once)
	Changed     int // of them, entities whose stored tags changed (and got a new details version)
	Republished int // addresses re-versioned so the publisher carries the new details
	Remarked    int // of them, entities marked again while they were recomputed: left marked for a later round
	Failed      int // of them, entities whose recomputation or store failed
	// BackedOff is, of the failed, those backed off (each reported as a TagsFailure); the others
	// were taken by another refresher meanwhile (marked again and claimed) or locked by a writer
	// marking them, and are retried by a later round without waiting.
	BackedOff int
}

// Add adds o's counts to r's.
func (r *TagsRefresh) Add(o TagsRefresh) {
	r.Entities += o.Entities
	r.Changed += o.Changed
	r.Republished += o.Republished
	r.Remarked += o.Remarked
	r.Failed += o.Failed
	r.BackedOff += o.BackedOff
}

// claimedEntity is a dirty entity a round claimed, with the mark and lease it claimed and the
// consecutive rounds holding it that failed whole before.
type claimedEntity struct {
	id            string
	mark          int64
	lease         time.Time
	roundFailures int
}

// computedEntity is a claimed entity with the tags computed for it.
type computedEntity struct {
	claimedEntity
	tags string
}

// failedEntity is a claimed entity whose computation or store failed.
type failedEntity struct {
	claimedEntity
	err error
}

// RefreshEntityTags claims up to limit entities that triggers marked dirty (their addresses' tags
// or membership changed), recomputes each one's populated tags with one query, then, holding the
// version lock like every versioned writer (so the versions it takes are published in order),
// stores those that changed with a new entity version and re-versions one address of each changed
// (or republish-marked) entity, so the attribution publisher sends the entity's new details once
// instead of once per address. The recomputation, which reads all of an entity's addresses,
// runs without the version lock, so imports and other versioned writers do not wait for it; an
// entity a writer marked again meanwhile (its computation may have missed the change) keeps its
// mark and stored tags, and a later round recomputes it.
//
// A failure is kept to the entity it happened to: an entity whose computation fails is left
// out, and when storing the others fails they are stored in halves down to the failing one.
// Failed entities are backed off (TagsRetryFirst) and reported to OnTagsFailure. The round
// returns an error when it cannot go on (ctx ended, the connection to the database failed) or
// when its store failed in a way no entity explains (a timeout, a lock or serialization
// conflict failing both halves of what failed whole: notAttributable), and then ends the
// leases of what it has not stored, for the next round to take the entities again at once.
//
// A round that failed whole so counts one more round_failures on its entities, and the claim
// takes entities with fewer such failures first, so the other dirty entities go on meanwhile.
// A round holding an entity whose rounds failed whole tagsIsolateAfter times in a row no longer
// gives up when both halves fail so: it isolates down to the entities that fail alone and
// backs them off (two entities that each time out, one in each half, would otherwise fail
// every round holding them). When it returns an error the round's counts say what it stored
// before failing.
func (s *Store) RefreshEntityTags(ctx context.Context, limit int) (TagsRefresh, error) {
	cs, err := s.claimEntityTags(ctx, limit)
	if err != nil || len(cs) == 0 {
		return TagsRefresh{}, err
	}
	res, err := s.refreshClaimed(ctx, cs)
	if err != nil {
		// Another round may take these entities at once rather than after the lease (the rows
		// stored are gone, so only the others are released).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		ids, marks, leases := claimArrays(cs)
		var whole *wholeRoundError
		_, _ = s.pool.Exec(rctx, entityTagsReleaseSQL, ids, marks, leases, errors.As(err, &whole))
		return res, err
	}
	return res, nil
}

// tagsIsolateAfter is how many consecutive rounds holding an entity may fail whole (both halves
// failing in a way no entity explains) before its next round isolates failures down to single
// entities instead: once may be a passing timeout or conflict, worth retrying whole; failing
// again on the same entities (the claim takes them after every other dirty entity) points at
// them.
const tagsIsolateAfter = 2

// wholeRoundError is a store failure no entity explained: both halves of what failed whole
// failed with notAttributable errors.
type wholeRoundError struct {
	n   int
	err error
}

func (e *wholeRoundError) Error() string {
	return fmt.Sprintf("store entity tags: both halves of %d entities failed: %v", e.n, e.err)
}

func (e *wholeRoundError) Unwrap() error { return e.err }

// claimArrays is the ids, claimed marks and leases of cs, as the statements take them.
func claimArrays[C interface{ claimed() claimedEntity }](cs []C) ([]string, []int64, []time.Time) {
	ids, marks, leases := make([]string, len(cs)), make([]int64, len(cs)), make([]time.Time, len(cs))
	for i := range cs {
		c := cs[i].claimed()
		ids[i], marks[i], leases[i] = c.id, c.mark, c.lease
	}
	return ids, marks, leases
}

func (c claimedEntity) claimed() claimedEntity { return c }

// refreshClaimed computes and stores the claimed entities' tags, isolating failures.
func (s *Store) refreshClaimed(ctx context.Context, cs []claimedEntity) (TagsRefresh, error) {
	res := TagsRefresh{Entities: len(cs)}
	var failed []failedEntity
	computed := make([]computedEntity, 0, len(cs))
	isolate := false
	for _, c := range cs {
		isolate = isolate || c.roundFailures >= tagsIsolateAfter
		tags, err := s.computeTags(ctx, c.id)
		if err != nil {
			if ctx.Err() != nil || stopsRound(err) {
				return res, err
			}
			failed = append(failed, failedEntity{c, err})
			continue
		}
		computed = append(computed, computedEntity{c, tags})
	}
	sf, err := s.storeIsolating(ctx, computed, isolate, &res)
	if err != nil {
		return res, err
	}
	failed = append(failed, sf...)
	if len(failed) > 0 {
		n, err := s.backOff(ctx, failed)
		if err != nil {
			return res, err
		}
		res.Failed, res.BackedOff = len(failed), n
	}
	return res, nil
}

func (s *Store) computeTags(ctx context.Context, id string) (string, error) {
	if s.tags.beforeCompute != nil {
		if err := s.tags.beforeCompute(ctx, id); err != nil {
			return "", fmt.Errorf("entity %s tags: %w", id, err)
		}
	}
	var tags string
	if err := s.pool.QueryRow(ctx, entityTagsComputeSQL, id).Scan(&tags); err != nil {
		return "", fmt.Errorf("entity %s tags: %w", id, err)
	}
	return tags, nil
}

// storeIsolating stores cs in one transaction and, when that fails, each half on its own, down
// to single entities, which it returns as failed; so one entity whose store fails (a bad value,
// a failing re-version) costs about 2·log2(len(cs)) short transactions, not the round. It
// returns an error, and stops, when ctx ended, the connection failed, or, unless isolate, both
// halves failed as the whole did in a way no entity explains (bisect).
func (s *Store) storeIsolating(ctx context.Context, cs []computedEntity, isolate bool, res *TagsRefresh) ([]failedEntity, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	err := s.storeInto(ctx, cs, res)
	switch {
	case err == nil:
		return nil, nil
	case ctx.Err() != nil || stopsRound(err):
		return nil, err
	case len(cs) == 1:
		return []failedEntity{{cs[0].claimedEntity, err}}, nil
	}
	return s.bisect(ctx, cs, isolate, res)
}

// bisect stores each half of cs, whose store failed, on its own, and goes on into the halves
// that fail. When both fail with an error that says nothing of their entities (notAttributable:
// a timeout, a lock or serialization conflict), the failure is the database's, not an
// entity's: it returns a wholeRoundError instead of backing off every entity after 2·len(cs)
// transactions, and the round is retried whole. With isolate (the round's entities failed so
// before) it goes on down to the entities that fail alone.
func (s *Store) bisect(ctx context.Context, cs []computedEntity, isolate bool, res *TagsRefresh) ([]failedEntity, error) {
	halves := [2][]computedEntity{cs[:len(cs)/2], cs[len(cs)/2:]}
	var errs [2]error
	for i, h := range halves {
		errs[i] = s.storeInto(ctx, h, res)
		if errs[i] != nil && (ctx.Err() != nil || stopsRound(errs[i])) {
			return nil, errs[i]
		}
	}
	if !isolate && notAttributable(errs[0]) && notAttributable(errs[1]) {
		return nil, &wholeRoundError{n: len(cs), err: errs[0]}
	}
	var failed []failedEntity
	for i, h := range halves {
		switch {
		case errs[i] == nil:
		case len(h) == 1:
			failed = append(failed, failedEntity{h[0].claimedEntity, errs[i]})
		default:
			f, err := s.bisect(ctx, h, isolate, res)
			if err != nil {
				return nil, err
			}
			failed = append(failed, f...)
		}
	}
	return failed, nil
}

// storeInto stores cs (storeTags) and adds what it did to res.
func (s *Store) storeInto(ctx context.Context, cs []computedEntity, res *TagsRefresh) error {
	r, err := s.storeTags(ctx, cs)
	if err == nil {
		res.Add(r)
	}
	return err
}

// stopsRound reports whether err means the round cannot go on, which no entity causes: the
// work was canceled (shutdown), or the connection to the database failed (it could not be
// made, broke, or the server is shutting down). The checks go from the outermost wrapper in:
// a connection the server refused (too many clients 53300, no such database 3D000, bad
// password 28P01) is a ConnectError holding a PgError whose code says nothing of a connection;
// a client-side timeout (context.DeadlineExceeded, pgconn.Timeout) also satisfies net.Error and
// SafeToRetry but is a timeout (notAttributable), not a connection failure.
func stopsRound(err error) bool {
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &ce), errors.Is(err, context.Canceled):
		return true
	case timedOut(err):
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P")
	}
	var ne net.Error
	return errors.As(err, &ne) || pgconn.SafeToRetry(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// timedOut reports whether err is a client-side timeout: a deadline passed while pgx waited.
func timedOut(err error) bool {
	return pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded)
}

// notAttributable reports whether err is a failure no entity explains by itself: a timeout
// (statement, lock), a lock not available, a serialization failure or deadlock. One entity can
// still cause one (a statement timing out on a huge entity), which is why bisect gives up only
// when both halves fail so.
func notAttributable(err error) bool {
	if err == nil {
		return false
	}
	if timedOut(err) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57014", "55P03", "40001", "40P01": // query_canceled (statement_timeout), lock_not_available, serialization_failure, deadlock_detected
			return true
		}
	}
	return false
}

// backOff leaves failed entities to a later round (sql/entity_tags_backoff.sql), reports each
// one it backed off, and returns how many.
func (s *Store) backOff(ctx context.Context, failed []failedEntity) (int, error) {
	ids, marks, leases := claimArrays(failed)
	rows, err := s.pool.Query(ctx, entityTagsBackoffSQL, ids, marks, leases, s.tags.retryFirst.Seconds(), s.tags.retryMax.Seconds())
	if err != nil {
		return 0, fmt.Errorf("back off failed entities: %w", err)
	}
	type backoff struct {
		id       string
		failures int
		secs     float64
	}
	bs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (backoff, error) {
		var b backoff
		return b, r.Scan(&b.id, &b.failures, &b.secs)
	})
	if err != nil {
		return 0, fmt.Errorf("back off failed entities: %w", err)
	}
	if s.tags.onFailure == nil {
		return len(bs), nil
	}
	errs := make(map[string]error, len(failed))
	for _, f := range failed {
		errs[f.id] = f.err
	}
	for _, b := range bs {
		s.tags.onFailure(TagsFailure{EntityID: b.id, Failures: b.failures, Backoff: time.Duration(b.secs * float64(time.Second)), Err: errs[b.id]})
	}
	return len(bs), nil
}

func (s *Store) claimEntityTags(ctx context.Context, limit int) ([]claimedEntity, error) {
	rows, err := s.pool.Query(ctx, entityTagsClaimSQL, limit, TagsClaimLease.Seconds())
	if err != nil {
		return nil, fmt.Errorf("claim dirty entities: %w", err)
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimedEntity, error) {
		var c claimedEntity
		return c, r.Scan(&c.id, &c.mark, &c.lease, &c.roundFailures)
	})
	if err != nil {
		return nil, fmt.Errorf("claim dirty entities: %w", err)
	}
	return cs, nil
}

// storeTags stores the computed tags of cs holding the version lock (sql/entity_tags_store.sql)
// and re-versions one address of each entity whose tags changed or that is marked republish.
func (s *Store) storeTags(ctx context.Context, cs []computedEntity) (TagsRefresh, error) {
	var res TagsRefresh
	ids, marks, leases := claimArrays(cs)
	tags := make([]string, len(cs))
	for i := range cs {
		tags[i] = cs[i].tags
	}
	if s.tags.beforeStore != nil {
		if err := s.tags.beforeStore(ctx, ids); err != nil {
			return res, fmt.Errorf("store entity tags: %w", err)
		}
	}
	err := s.inTx(ctx, true, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, entityTagsStoreSQL, ids, marks, tags)
		if err != nil {
			return fmt.Errorf("store entity tags: %w", err)
		}
		type stored struct {
			id                 string
			republish, changed bool
		}
		done, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (stored, error) {
			var d stored
			return d, r.Scan(&d.id, &d.republish, &d.changed)
		})
		if err != nil {
			return fmt.Errorf("store entity tags: %w", err)
		}
		res.Remarked = len(cs) - len(done)
		if res.Remarked > 0 {
			// Their computation succeeded: a later failure backs them off from the start.
			if _, err := tx.Exec(ctx, entityTagsSucceededSQL, ids, leases); err != nil {
				return fmt.Errorf("store entity tags: reset failures: %w", err)
			}
		}
		for _, d := range done {
			if d.changed {
				res.Changed++
			}
			if !d.changed && !d.republish {
				continue
			}
			tag, err := tx.Exec(ctx, entityTagsBumpSQL, d.id)
			if err != nil {
				return fmt.Errorf("republish entity %s: %w", d.id, err)
			}
			res.Republished += int(tag.RowsAffected())
		}
		return nil
	})
	return res, err
}
