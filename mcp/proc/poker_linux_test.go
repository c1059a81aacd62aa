package proc

import "testing"

// TestPokerWakesOncePerLook checks that tool calls poking the reaper wake
// it once per look, however many calls poke meanwhile.
func TestPokerWakesOncePerLook(t *testing.T) {
	p := newPoker()
	for range 1000 {
		p.poke()
	}
	if len(p.c) != 1 {
		t.Fatalf("after 1000 pokes, %d wake-ups wait; want 1", len(p.c))
	}
	<-p.c // the reaper wakes, and finds it too soon for a look
	for range 1000 {
		p.poke()
	}
	if len(p.c) != 0 {
		t.Fatal("pokes while a look was pending woke the reaper again")
	}
	p.looking()
	p.poke()
	if len(p.c) != 1 {
		t.Fatal("a poke after the look began did not wake the reaper")
	}
}
