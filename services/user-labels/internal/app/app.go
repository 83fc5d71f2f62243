package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/user-labels/client"
)

// Store keeps labels, entities and additions, and writes a change event to the outbox in the
// same transaction as every change. Every method is scoped to one user; an id of another user's
// entity is ErrNotFound. Implementations are safe for concurrent use.
type Store interface {
	// EachLabel calls fn with each of the user's labels, ordered by chain type and address, as
	// they are read, and returns the version of the label set they are, read in one snapshot (0
	// when there are none).
	EachLabel(ctx context.Context, user string, fn func(Label) error) (int64, error)
	// Versions returns the versions of the user's label set and entity set, which every write
	// of them moves (zero for a user who never had any).
	Versions(ctx context.Context, user string) (Versions, error)
	// LookupIndex reads, in one snapshot, the user's versions, labels and entity memberships.
	// With over maxLabels labels it holds only the versions (nil maps).
	LookupIndex(ctx context.Context, user string, maxLabels int) (LookupIndex, error)
	// UpsertLabels creates or replaces labels (distinct refs) in one transaction; an
	// *OwnerLimitError when the user would then store more than max labels (nothing is
	// written then), also under concurrent writes.
	UpsertLabels(ctx context.Context, user string, labels []Label, max int) error
	// UpdateLabel replaces name and note of an existing label; ErrNotFound when absent.
	UpdateLabel(ctx context.Context, user string, l Label) error
	DeleteLabels(ctx context.Context, user string, refs []AddressRef) (int, error)

	// CreateEntities creates every entity in one transaction; an *OwnerLimitError when the
	// user would then store more than max entities (nothing is created then), also under
	// concurrent writes.
	CreateEntities(ctx context.Context, user string, in []EntityInput, max int) ([]Entity, error)
	Entities(ctx context.Context, user string, withAddresses bool) ([]Entity, error)
	Entity(ctx context.Context, user, id string) (Entity, error)
	// EntitiesByID returns the user's entities among ids (uuids), with their addresses.
	EntitiesByID(ctx context.Context, user string, ids []string) ([]Entity, error)
	SharedEntity(ctx context.Context, id string) (Entity, error)
	// ReplaceEntity overwrites name, note, the address set and (when given) shareable.
	ReplaceEntity(ctx context.Context, user, id string, in EntityInput) (Entity, error)
	// AddEntityAddresses adds refs with the entity row locked; a *LimitError when the entity
	// would hold more than max addresses (nothing is added then).
	AddEntityAddresses(ctx context.Context, user, id string, refs []AddressRef, max int) (Entity, error)
	DeleteEntity(ctx context.Context, user, id string) (int, error)

	// AddOperatorAdditions records refs as the user's additions to an operator entity, at most
	// max in all (a *LimitError otherwise), and returns all of them. The first additions to an
	// operator entity count as one of the user's entities: an *OwnerLimitError when the user
	// would then store more than maxEntities.
	AddOperatorAdditions(ctx context.Context, user, entityID string, refs []AddressRef, max, maxEntities int) ([]AddressRef, error)
	// DeleteOperatorAdditions removes all of the user's additions to an operator entity,
	// freeing the entity slot they took, and returns 1, or 0 when there were none.
	DeleteOperatorAdditions(ctx context.Context, user, entityID string) (int, error)
	OperatorAdditions(ctx context.Context, user, entityID string) ([]AddressRef, error)
	// AllOperatorAdditions returns the user's additions to every operator entity, by entity id.
	AllOperatorAdditions(ctx context.Context, user string) (map[string][]AddressRef, error)
	// OperatorAdditionsOf returns the user's additions to the operator entities ids, by
	// entity id.
	OperatorAdditionsOf(ctx context.Context, user string, ids []string) (map[string][]AddressRef, error)

	// Lookup returns the user's labels of refs and the user's entities holding them, keyed by
	// AddressRef.
	Lookup(ctx context.Context, user string, refs []AddressRef) (map[AddressRef]LabelText, map[AddressRef][]EntityRef, error)

	// SearchLabels and SearchEntities return the user's labels and entities matching query
	// (case-insensitive name prefix or address prefix, and name substring when substrings),
	// best matches first.
	SearchLabels(ctx context.Context, user, query string, substrings bool, limit, offset int) ([]Label, error)
	SearchEntities(ctx context.Context, user, query string, substrings bool, limit, offset int) ([]Entity, error)

	AlertStore
}

// MaxIndexedLabels is the most labels a user may have for Lookup to keep an in-memory index of
// them; bigger label sets are looked up address by address in the database.
const MaxIndexedLabels = 50000

// Service is the user-labels logic. It is safe for concurrent use.
type Service struct {
	store  Store
	types  ChainTypes
	labels *userCache[labelList]    // nil: no cache
	index  *userCache[*LookupIndex] // nil: no cache
	// maxIndexed is the most labels a user may have to be indexed (MaxIndexedLabels).
	maxIndexed int
	// maxLabels and maxEntities cap what one user may store.
	maxLabels, maxEntities int
	alerts                 alerts
}

// labelList is an encoded GET /user/labels answer.
type labelList struct {
	body []byte
	n    int
}

// LookupIndex is a user's labels and entity memberships by address, at Versions. Nil maps mean
// the user has too many labels to index.
type LookupIndex struct {
	Versions Versions
	Labels   map[AddressRef]LabelText
	Entities map[AddressRef][]EntityRef
}

// size estimates the memory the index holds.
func (x *LookupIndex) size() int64 {
	var n int64
	for r, l := range x.Labels {
		n += int64(96 + len(r.ChainType) + len(r.Address) + len(l.Name) + len(l.Note))
	}
	for r, es := range x.Entities {
		n += int64(64 + len(r.ChainType) + len(r.Address))
		for _, e := range es {
			n += int64(48 + len(e.ID) + len(e.Name) + len(e.Note))
		}
	}
	return n
}

// Option tunes a Service.
type Option func(*Service)

// WithLabelCache keeps up to maxBytes of encoded label lists in memory (see LabelsJSON); 0 or
// less keeps none.
func WithLabelCache(maxBytes int64) Option {
	return func(s *Service) {
		if maxBytes > 0 {
			s.labels = newUserCache[labelList](maxBytes)
		}
	}
}

// WithLookupCache keeps up to maxBytes of per-user lookup indexes in memory (see Lookup); 0 or
// less keeps none.
func WithLookupCache(maxBytes int64) Option {
	return func(s *Service) {
		if maxBytes > 0 {
			s.index = newUserCache[*LookupIndex](maxBytes)
		}
	}
}

// WithOwnerLimits caps the labels and the entities one user may store
// (DefaultMaxLabelsPerUser, DefaultMaxEntitiesPerUser unless set).
func WithOwnerLimits(maxLabels, maxEntities int) Option {
	return func(s *Service) {
		// A zero (a configuration built without its defaults, as other services' tests build
		// one) keeps the default: no cap is not a setting, and a cap of 0 would refuse all.
		if maxLabels > 0 {
			s.maxLabels = maxLabels
		}
		if maxEntities > 0 {
			s.maxEntities = maxEntities
		}
	}
}

// WithMaxIndexedLabels changes MaxIndexedLabels (for tests of the unindexed path).
func WithMaxIndexedLabels(n int) Option { return func(s *Service) { s.maxIndexed = n } }

// New returns a service over store accepting the given chain types.
func New(store Store, types ChainTypes, opts ...Option) *Service {
	s := &Service{store: store, types: types, maxIndexed: MaxIndexedLabels,
		maxLabels: DefaultMaxLabelsPerUser, maxEntities: DefaultMaxEntitiesPerUser, alerts: defaultAlerts()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// ChainTypes are the chain types the service accepts.
func (s *Service) ChainTypes() ChainTypes { return s.types }

// operatorSlug is the shape of an operator entity id (docs/contracts.md).
var operatorSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,127}$`)

// IsOperatorEntityID reports whether id has the shape of an operator entity id and not of a
// user entity id.
func IsOperatorEntityID(id string) bool {
	return !client.IsUserEntityID(id) && operatorSlug.MatchString(id)
}

// LabelsJSON returns every label of user as a JSON array of UserLabel, ordered by chain type and
// address, and how many there are. With a label cache, an answer built earlier is served while
// the stored label set is still at the version it was built from (one small query instead of
// reading and encoding every label).
func (s *Service) LabelsJSON(ctx context.Context, user string) ([]byte, int, error) {
	if s.labels != nil {
		v, err := s.store.Versions(ctx, user)
		if err != nil {
			return nil, 0, err
		}
		if l, ok := s.labels.get(user, Versions{Labels: v.Labels}); ok {
			return l.body, l.n, nil
		}
	}
	// Each label is encoded as it is read, straight into the answer: the list is never held as
	// values too. The answer is sent once the query is done, so a slow client does not hold a
	// database connection; the per-user cap bounds its size.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	buf.WriteByte('[')
	n := 0
	v, err := s.store.EachLabel(ctx, user, func(l Label) error {
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("encode label: %w", err)
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	buf.WriteByte(']')
	body := buf.Bytes()
	if s.labels != nil && v > 0 {
		s.labels.put(user, Versions{Labels: v}, labelList{body: body, n: n}, int64(len(body)))
	}
	return body, n, nil
}

// PutLabels validates the whole batch, then creates or replaces every label in one transaction.
// The first bad item is reported with its index and nothing is written.
func (s *Service) PutLabels(ctx context.Context, user string, in []LabelInput) ([]Label, error) {
	if len(in) == 0 {
		return nil, httpx.BadRequest("body: want an array of at least one label")
	}
	if len(in) > MaxLabelsPerWrite {
		return nil, httpx.BadRequest("body: at most %d labels per request (got %d)", MaxLabelsPerWrite, len(in))
	}
	out := make([]Label, len(in))
	first := make(map[AddressRef]int, len(in))
	for i, li := range in {
		l, err := s.types.ValidateLabel(fmt.Sprintf("labels[%d]", i), li)
		if err != nil {
			return nil, err
		}
		if j, dup := first[l.Ref()]; dup {
			return nil, httpx.BadRequest("labels[%d]: same address and chainType as labels[%d]", i, j)
		}
		first[l.Ref()] = i
		out[i] = l
	}
	if err := s.store.UpsertLabels(ctx, user, out, s.maxLabels); err != nil {
		if le := (*OwnerLimitError)(nil); errors.As(err, &le) {
			return nil, httpx.BadRequest("%s", le.Error())
		}
		return nil, fmt.Errorf("upsert %d labels: %w", len(out), err)
	}
	return out, nil
}

// LabelUpdate is a PUT /user/labels/{id} body; Address and ChainType are optional and, when
// given, must name the label in the path.
type LabelUpdate struct {
	Name, Note         string
	Address, ChainType *string
}

// UpdateLabel replaces the name and note of the label id ("<address>:<chainType>").
func (s *Service) UpdateLabel(ctx context.Context, user, id string, u LabelUpdate) (Label, error) {
	ref, err := s.types.ParseLabelID(id)
	if err != nil {
		return Label{}, httpx.BadRequest("label: %v", err)
	}
	in := LabelInput{Name: u.Name, Note: u.Note, Address: ref.Address, ChainType: ref.ChainType}
	if u.ChainType != nil {
		in.ChainType = *u.ChainType
	}
	if u.Address != nil {
		in.Address = *u.Address
	}
	l, err := s.types.ValidateLabel("", in)
	if err != nil {
		return Label{}, err
	}
	if l.Ref() != ref {
		return Label{}, httpx.BadRequest("address, chainType: must name the label in the path (%s:%s)", ref.Address, ref.ChainType)
	}
	if err := s.store.UpdateLabel(ctx, user, l); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Label{}, httpx.NotFound("no label %s:%s", ref.Address, ref.ChainType)
		}
		return Label{}, fmt.Errorf("update label: %w", err)
	}
	return l, nil
}

// DeleteLabels deletes the user's labels of refs and returns how many existed.
func (s *Service) DeleteLabels(ctx context.Context, user string, refs []AddressRef) (int, error) {
	n, err := s.store.DeleteLabels(ctx, user, refs)
	if err != nil {
		return 0, fmt.Errorf("delete labels: %w", err)
	}
	return n, nil
}

// CreateEntities validates every body (errors carry "entities[i]" when the request held an
// array) and creates them all in one transaction.
func (s *Service) CreateEntities(ctx context.Context, user string, bodies []EntityBody, array bool) ([]Entity, error) {
	if len(bodies) == 0 {
		return nil, httpx.BadRequest("body: want an entity or an array of at least one entity")
	}
	if len(bodies) > MaxEntitiesPerWrite {
		return nil, httpx.BadRequest("body: at most %d entities per request (got %d)", MaxEntitiesPerWrite, len(bodies))
	}
	ins := make([]EntityInput, len(bodies))
	for i, b := range bodies {
		path := ""
		if array {
			path = fmt.Sprintf("entities[%d]", i)
		}
		in, err := s.types.ValidateEntity(path, b)
		if err != nil {
			return nil, err
		}
		ins[i] = in
	}
	es, err := s.store.CreateEntities(ctx, user, ins, s.maxEntities)
	if le := (*OwnerLimitError)(nil); errors.As(err, &le) {
		return nil, httpx.BadRequest("%s", le.Error())
	}
	if err != nil {
		return nil, fmt.Errorf("create %d entities: %w", len(ins), err)
	}
	return es, nil
}

// Entities lists the user's entities, oldest first.
func (s *Service) Entities(ctx context.Context, user string, withAddresses bool) ([]Entity, error) {
	return s.store.Entities(ctx, user, withAddresses)
}

func entityNotFound(id string) error { return httpx.NotFound("no user entity %q", params.Trunc(id)) }

// Entity returns the user's entity id with its addresses.
func (s *Service) Entity(ctx context.Context, user, id string) (Entity, error) {
	if !client.IsUserEntityID(id) {
		return Entity{}, entityNotFound(id)
	}
	e, err := s.store.Entity(ctx, user, id)
	return e, s.entityErr(id, err)
}

// MaxEntityBatch is the most ids one EntitiesByID call takes (the most values of one public
// query parameter, libs/params.MaxListItems).
const MaxEntityBatch = 1000

// EntitiesByID returns those of ids that are the user's entities, with their addresses, in the
// order of ids and each once: a service resolving many entity references of one request asks
// for them in one call. An id that is not a user entity id's shape, or is no entity of the user,
// is left out (the caller's "not found"). More than MaxEntityBatch distinct ids is a 400.
func (s *Service) EntitiesByID(ctx context.Context, user string, ids []string) ([]Entity, error) {
	var want []string
	seen := map[string]bool{}
	for _, id := range ids {
		id = strings.ToLower(id)
		if !client.IsUserEntityID(id) || seen[id] {
			continue
		}
		seen[id] = true
		want = append(want, id)
	}
	if len(want) > MaxEntityBatch {
		return nil, httpx.BadRequest("ids: at most %d entity ids, got %d", MaxEntityBatch, len(want))
	}
	out := []Entity{}
	if len(want) == 0 {
		return out, nil
	}
	got, err := s.store.EntitiesByID(ctx, user, want)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]Entity, len(got))
	for _, e := range got {
		byID[e.ID] = e
	}
	for _, id := range want {
		if e, ok := byID[id]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// SharedEntity returns entity id if it is shareable, whoever owns it.
func (s *Service) SharedEntity(ctx context.Context, id string) (Entity, error) {
	if !client.IsUserEntityID(id) {
		return Entity{}, entityNotFound(id)
	}
	e, err := s.store.SharedEntity(ctx, id)
	return e, s.entityErr(id, err)
}

// ReplaceEntity overwrites name, note and the full address set of the user's entity id, and
// shareable when given.
func (s *Service) ReplaceEntity(ctx context.Context, user, id string, b EntityBody) (Entity, error) {
	if !client.IsUserEntityID(id) {
		return Entity{}, entityNotFound(id)
	}
	in, err := s.types.ValidateEntity("", b)
	if err != nil {
		return Entity{}, err
	}
	e, err := s.store.ReplaceEntity(ctx, user, id, in)
	return e, s.entityErr(id, err)
}

// AddAddresses adds addresses to the user's entity id and returns the entity; for an operator
// entity id it records them as the user's additions and returns all of them (an Additions). An
// id that is neither the user's entity nor an operator entity id is not found. Either way the
// total may not pass MaxEntityAddresses, also under concurrent calls.
func (s *Service) AddAddresses(ctx context.Context, user, id string, addrs map[string][]string) (any, error) {
	isUserEntity := client.IsUserEntityID(id)
	if !isUserEntity && !IsOperatorEntityID(id) {
		return nil, entityNotFound(id)
	}
	refs, err := s.types.ValidateAddresses("", addrs)
	if err != nil {
		return nil, err
	}
	if isUserEntity {
		e, err := s.store.AddEntityAddresses(ctx, user, id, refs, MaxEntityAddresses)
		return e, s.entityErr(id, err)
	}
	all, err := s.store.AddOperatorAdditions(ctx, user, id, refs, MaxEntityAddresses, s.maxEntities)
	if err != nil {
		return nil, s.entityErr(id, err)
	}
	return Additions{EntityID: id, Addresses: Group(all)}, nil
}

// DeleteEntity deletes the user's entity id (its addresses with it); for an operator entity id
// it removes all of the user's additions to that entity. Either way nothing to delete is not
// found.
func (s *Service) DeleteEntity(ctx context.Context, user, id string) (int, error) {
	var n int
	var err error
	switch {
	case client.IsUserEntityID(id):
		n, err = s.store.DeleteEntity(ctx, user, id)
	case IsOperatorEntityID(id):
		n, err = s.store.DeleteOperatorAdditions(ctx, user, id)
	default:
		return 0, entityNotFound(id)
	}
	if err != nil {
		return 0, fmt.Errorf("delete entity %s: %w", id, err)
	}
	if n == 0 {
		return 0, entityNotFound(id)
	}
	return n, nil
}

// Additions returns the user's additions to operator entity id by chain type (empty when none).
func (s *Service) Additions(ctx context.Context, user, id string) (map[string][]string, error) {
	if !IsOperatorEntityID(id) {
		return nil, httpx.NotFound("%q is not an operator entity id", params.Trunc(id))
	}
	refs, err := s.store.OperatorAdditions(ctx, user, id)
	if err != nil {
		return nil, fmt.Errorf("additions to %s: %w", id, err)
	}
	return Group(refs), nil
}

// AllAdditions returns the user's additions to every operator entity, by entity id and chain
// type (empty when none).
func (s *Service) AllAdditions(ctx context.Context, user string) (map[string]map[string][]string, error) {
	all, err := s.store.AllOperatorAdditions(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("additions to operator entities: %w", err)
	}
	out := make(map[string]map[string][]string, len(all))
	for id, refs := range all {
		out[id] = Group(refs)
	}
	return out, nil
}

// AdditionsOf returns the user's additions to the operator entities among ids, by entity id and
// chain type (an entity with none, or an id that is not an operator entity id, is absent): a
// service resolving many operator entity references of one request asks for them in one call,
// and for those alone. More than MaxEntityBatch distinct ids is a 400.
func (s *Service) AdditionsOf(ctx context.Context, user string, ids []string) (map[string]map[string][]string, error) {
	var want []string
	seen := map[string]bool{}
	for _, id := range ids {
		if IsOperatorEntityID(id) && !seen[id] {
			seen[id] = true
			want = append(want, id)
		}
	}
	if len(want) > MaxEntityBatch {
		return nil, httpx.BadRequest("ids: at most %d entity ids, got %d", MaxEntityBatch, len(want))
	}
	out := map[string]map[string][]string{}
	if len(want) == 0 {
		return out, nil
	}
	got, err := s.store.OperatorAdditionsOf(ctx, user, want)
	if err != nil {
		return nil, fmt.Errorf("additions to operator entities: %w", err)
	}
	for id, refs := range got {
		out[id] = Group(refs)
	}
	return out, nil
}

// Search limits: the query's length in characters, and results per kind.
const (
	MaxSearchQueryRunes = 200
	MaxSearchResults    = 100
	MaxSearchOffset     = 10000
)

// MinSubstringQueryRunes is the shortest query matched inside names. A shorter one has no
// trigram for the trigram index to look up, so finding it inside names reads all of the user's
// labels (up to the cap, 100,000) when it matches few; it matches name and address prefixes
// only, read off b-trees (docs/user-labels.md, "Search cost").
const MinSubstringQueryRunes = 3

// SubstringSearchable reports whether query is matched inside names: at least
// MinSubstringQueryRunes long and holding a letter or digit (pg_trgm takes its trigrams from
// words of letters and digits, so a query of punctuation alone has none to look up either).
func SubstringSearchable(query string) bool {
	return utf8.RuneCountInString(query) >= MinSubstringQueryRunes &&
		strings.IndexFunc(query, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// Search returns the user's labels and entities matching query, up to limit of each after
// skipping offset. A query SubstringSearchable refuses matches prefixes only.
func (s *Service) Search(ctx context.Context, user, query string, limit, offset int) (SearchResult, error) {
	if n := utf8.RuneCountInString(query); n == 0 || n > MaxSearchQueryRunes {
		return SearchResult{}, httpx.BadRequest("query: must be 1 to %d characters (got %d)", MaxSearchQueryRunes, n)
	}
	if limit < 0 || limit > MaxSearchResults {
		return SearchResult{}, httpx.BadRequest("limit: must be 0 to %d (got %d)", MaxSearchResults, limit)
	}
	if offset < 0 || offset > MaxSearchOffset {
		return SearchResult{}, httpx.BadRequest("offset: must be 0 to %d (got %d)", MaxSearchOffset, offset)
	}
	out := SearchResult{Entities: []Entity{}, Labels: []Label{}}
	if limit == 0 {
		return out, nil
	}
	substrings := SubstringSearchable(query)
	var err error
	if out.Labels, err = s.store.SearchLabels(ctx, user, query, substrings, limit, offset); err != nil {
		return out, err
	}
	if out.Entities, err = s.store.SearchEntities(ctx, user, query, substrings, limit, offset); err != nil {
		return out, err
	}
	return out, nil
}

// Lookup returns the user's labels and entity memberships of addrs, keyed by each address as
// given ("<chainType>:<address>"). Addresses that are not valid for their chain type can hold
// nothing and are skipped.
func (s *Service) Lookup(ctx context.Context, user string, addrs []AddressRef) (Lookup, error) {
	out := Lookup{Labels: map[string]LabelText{}, Entities: map[string][]EntityRef{}}
	if len(addrs) > MaxLookupAddresses {
		return out, httpx.BadRequest("addresses: at most %d per lookup (got %d)", MaxLookupAddresses, len(addrs))
	}
	asked := make([]AddressRef, 0, len(addrs)) // canonical, parallel to given
	given := make([]AddressRef, 0, len(addrs))
	for _, a := range addrs {
		ref, err := s.types.NormalizeRef(a.ChainType, a.Address)
		if err != nil {
			continue
		}
		asked = append(asked, ref)
		given = append(given, a)
	}
	if len(asked) == 0 {
		return out, nil
	}
	labels, entities, err := s.lookup(ctx, user, asked)
	if err != nil {
		return out, err
	}
	for i, ref := range asked {
		l, hasLabel := labels[ref]
		es, inEntity := entities[ref]
		if !hasLabel && !inEntity {
			continue
		}
		k := given[i].Key()
		if hasLabel {
			out.Labels[k] = l
		}
		if inEntity {
			out.Entities[k] = es
		}
	}
	return out, nil
}

// lookup returns the labels and memberships of refs (which may repeat): from the user's
// in-memory index while it is current (building it when not), or, with no cache or too many
// labels to index, from the database for refs alone.
func (s *Service) lookup(ctx context.Context, user string, refs []AddressRef) (map[AddressRef]LabelText, map[AddressRef][]EntityRef, error) {
	if s.index != nil {
		v, err := s.store.Versions(ctx, user)
		if err != nil {
			return nil, nil, err
		}
		if v == (Versions{}) {
			return nil, nil, nil // the user never had a label or an entity
		}
		idx, ok := s.index.get(user, v)
		if !ok {
			built, err := s.store.LookupIndex(ctx, user, s.maxIndexed)
			if err != nil {
				return nil, nil, err
			}
			idx = &built
			// Kept even when too big to index (nil maps), so it is not re-read until it changes.
			s.index.put(user, built.Versions, idx, idx.size())
		}
		if idx.Labels != nil {
			return idx.Labels, idx.Entities, nil // read-only from here on
		}
	}
	distinct := make([]AddressRef, 0, len(refs))
	seen := make(map[AddressRef]bool, len(refs))
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			distinct = append(distinct, r)
		}
	}
	labels, entities, err := s.store.Lookup(ctx, user, distinct)
	if err != nil {
		return nil, nil, fmt.Errorf("lookup %d addresses: %w", len(distinct), err)
	}
	return labels, entities, nil
}

// entityErr turns the store's ErrNotFound, LimitError and OwnerLimitError into the caller's 404
// and 400s.
func (s *Service) entityErr(id string, err error) error {
	var le *LimitError
	var oe *OwnerLimitError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		return entityNotFound(id)
	case errors.As(err, &le):
		return httpx.BadRequest("%s", le.Error())
	case errors.As(err, &oe):
		return httpx.BadRequest("%s", oe.Error())
	default:
		return fmt.Errorf("entity %s: %w", id, err)
	}
}
