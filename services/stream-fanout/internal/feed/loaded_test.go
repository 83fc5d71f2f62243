package feed

import "testing"

// A start-up read is done once every partition that held records is read up to its end, or
// found reset; at once when none held any.
func TestLoaded(t *testing.T) {
	n := 0
	l := NewLoaded(map[int]int64{0: 0, 1: 5, 2: 0}, map[int]int64{0: 3, 1: 5, 2: 10}, func() { n++ })
	l.Record(0, 1)
	l.Record(0, 2)
	if n != 0 {
		t.Fatal("done before partition 2 was read")
	}
	l.Gap(Gap{Partition: 2, From: 4, To: 0, Reset: true})
	if n != 1 {
		t.Fatalf("done %d times after every partition was read or reset, want 1", n)
	}
	l.Record(2, 9)
	if n != 1 {
		t.Fatalf("done %d times, want once", n)
	}
	empty := 0
	NewLoaded(map[int]int64{0: 4}, map[int]int64{0: 4}, func() { empty++ })
	if empty != 1 {
		t.Fatal("a read of a topic holding nothing is not done at once")
	}
}
