package metering

import (
	"time"

	"github.com/chainintel/chainintel/services/edge/internal/usage"
)

// Kept returns how many records of this replica's calls the ledger keeps for e's period of at:
// calls by event id (events not reported published) and published credits by millisecond.
func (l *CreditLedger) Kept(e usage.Entity, at time.Time) (unsent, sent int) {
	start, _ := usage.PeriodOf(at)
	l.mu.Lock()
	defer l.mu.Unlock()
	en := l.byKey[redisKey(e, start)]
	if en == nil {
		return 0, 0
	}
	return len(en.unsent), len(en.sent)
}
