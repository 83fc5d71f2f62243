package ws

import "testing"

// What a checkpoint saved for a session is counted for the connection only while it still
// serves that session: after an in-band reconnect to another, the count attach set for the new
// one is not added to.
func TestAddSavedCountsOnlyTheSessionServed(t *testing.T) {
	c := &conn{sessID: "new"}
	c.usedSaved.Store(3)
	c.addSaved("old", 5)
	if got := c.usedSaved.Load(); got != 3 {
		t.Fatalf("usedSaved %d after a save of the session left, want 3", got)
	}
	c.addSaved("new", 2)
	if got := c.usedSaved.Load(); got != 5 {
		t.Fatalf("usedSaved %d after a save of the session served, want 5", got)
	}
}
