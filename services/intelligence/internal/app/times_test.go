package app

import "testing"

// TestTimesKeepFractions: summary and contract times keep the fraction of a second of a block
// time that has one (arbitrum_one, solana), as /transfers renders it, so lastTx fed back as
// timeLte still matches the transfer it names.
func TestTimesKeepFractions(t *testing.T) {
	for ms, want := range map[int64]string{
		1795769775200: "2026-11-27T08:56:15.2Z",
		1795647783750: "2026-11-25T23:03:03.75Z",
		1795647783000: "2026-11-25T23:03:03Z",
		0:             "1970-01-01T00:00:00Z",
	} {
		if got := msTime(ms); got != want {
			t.Errorf("msTime(%d) = %s, want %s", ms, got, want)
		}
	}
}
