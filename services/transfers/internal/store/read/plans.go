package read

import "context"

// The plans of a /transfers read. planTransfers is the one place that chooses among them; each
// reads its page and its (capped) count its own way:
//
//   - groupPlan: the base is one live attribution group (an entity, a type, a deposit service, or
//     from=/to= one of them: entityPairPlan, entityPairSidePlan): pages by time through the group's
//     pair rows (entityPairPage), counts from its rollups or pair rows (countTransfers).
//   - groupPairPlan: from=<one live group>&to=<another> whose pair the rollups keep (pairPlan):
//     pages by time through the hours their pair rollup names (pairPage).
//   - groupUnionPlan: a base of several entities (unionPlan): the merge of their groups' pages.
//   - entityAddrsPlan: a base of one entity and listed addresses (entityAddrsPlan).
//   - rowsPlan: anything else, read through the address and sort-key indexes (listRows, rowCount).
//
// A plan other than groupPlan and rowsPlan pages by time only; sorted otherwise, its rows are read
// as rowsPlan reads them, and counted its own way.
type transferPlan interface {
	page(ctx context.Context, p Page) ([]TransferRow, error)
	count(ctx context.Context) (int, error)
}

// countFirst is a plan whose page, at some pages, needs the count first (groupPlan).
type countFirst interface {
	countFirst(p Page) bool
	pageCounted(ctx context.Context, p Page, n int) ([]TransferRow, error)
}

// planTransfers chooses the plan of f (its from/to sides already restated as a base where one
// entity stands alone: sideAsBase) for a page sorted by sortKey.
func (s *Reader) planTransfers(ctx context.Context, f TransferFilter, sortKey string) (transferPlan, error) {
	g, err := s.entityPairPlan(ctx, f)
	if err != nil || g != "" {
		return groupPlan{s: s, f: f, fe: f, g: g}, err
	}
	g1, g2, err := s.pairPlan(ctx, f)
	if err != nil {
		return nil, err
	}
	if g1 != "" {
		return groupPairPlan{s: s, f: f, g1: g1, g2: g2}, nil
	}
	fe, g, err := s.entityPairSidePlan(ctx, f)
	if err != nil || g != "" {
		return groupPlan{s: s, f: f, fe: fe, g: g}, err
	}
	if sortKey != "time" {
		return rowsPlan{s: s, f: f}, nil
	}
	union, err := s.unionPlan(ctx, f)
	if err != nil || union != nil {
		return groupUnionPlan{s: s, f: f, gs: union}, err
	}
	ga, addrs, err := s.entityAddrsPlan(ctx, f)
	if err != nil || addrs != nil {
		return entityAddrsPlan{s: s, f: f, g: ga, addrs: addrs}, err
	}
	return rowsPlan{s: s, f: f}, nil
}

// groupPlan reads live group g's transfers through its pair rows; fe is f as they read it (a
// condition on their other side: entityPairSidePlan).
type groupPlan struct {
	s     *Reader
	f, fe TransferFilter
	g     string
}

func (pl groupPlan) page(ctx context.Context, p Page) ([]TransferRow, error) {
	if p.SortKey != "time" {
		return pl.s.listRows(ctx, pl.f, p)
	}
	return pl.s.entityPairPage(ctx, pl.fe, pl.g, p)
}

func (pl groupPlan) count(ctx context.Context) (int, error) {
	return pl.s.countTransfers(ctx, pl.f, pl.fe, pl.g)
}

// countFirst: a page by time with a condition on the pair rows' other side (from or to) walks
// the pair rows until it has a page of matches: where there are fewer, it reads them all,
// probing the other side's set for each. The count is then taken first: a page past it is empty
// without reading, and a page that would read every pair row hashes the sets instead
// (from=<exchange>&to=deposit:<exchange>, which matches nothing).
func (pl groupPlan) countFirst(p Page) bool {
	return p.SortKey == "time" && (pl.fe.From.Active() || pl.fe.To.Active())
}

func (pl groupPlan) pageCounted(ctx context.Context, p Page, n int) ([]TransferRow, error) {
	fe := pl.fe
	fe.sparseSides = n < min(p.Offset+p.Limit, MaxCount)
	return pl.s.entityPairPage(ctx, fe, pl.g, p)
}

// groupPairPlan reads the transfers from live group g1 to g2 through the hours of their pair
// rollup.
type groupPairPlan struct {
	s      *Reader
	f      TransferFilter
	g1, g2 string
}

func (pl groupPairPlan) page(ctx context.Context, p Page) ([]TransferRow, error) {
	if p.SortKey != "time" {
		return pl.s.listRows(ctx, pl.f, p)
	}
	return pl.s.pairPage(ctx, pl.f, pl.g1, pl.g2, p)
}

func (pl groupPairPlan) count(ctx context.Context) (int, error) {
	return pl.s.pairCountTransfers(ctx, pl.f, pl.g1, pl.g2)
}

// groupUnionPlan reads a base of disjoint live groups gs as the merge of their pages.
type groupUnionPlan struct {
	s  *Reader
	f  TransferFilter
	gs []string
}

func (pl groupUnionPlan) page(ctx context.Context, p Page) ([]TransferRow, error) {
	return pl.s.unionPage(ctx, pl.f, pl.gs, p)
}

func (pl groupUnionPlan) count(ctx context.Context) (int, error) {
	return pl.s.countTransfers(ctx, pl.f, pl.f, "")
}

// entityAddrsPlan reads a base of live group g and listed addresses outside it.
type entityAddrsPlan struct {
	s     *Reader
	f     TransferFilter
	g     string
	addrs []string
}

func (pl entityAddrsPlan) page(ctx context.Context, p Page) ([]TransferRow, error) {
	return pl.s.entityAddrsPage(ctx, pl.f, pl.g, pl.addrs, p)
}

func (pl entityAddrsPlan) count(ctx context.Context) (int, error) {
	return pl.s.entityAddrsCount(ctx, pl.f, pl.g, pl.addrs)
}

// rowsPlan reads the rows through the address and sort-key indexes.
type rowsPlan struct {
	s *Reader
	f TransferFilter
}

func (pl rowsPlan) page(ctx context.Context, p Page) ([]TransferRow, error) {
	return pl.s.listRows(ctx, pl.f, p)
}

func (pl rowsPlan) count(ctx context.Context) (int, error) {
	return pl.s.countTransfers(ctx, pl.f, pl.f, "")
}
