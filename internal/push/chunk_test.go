package push

import "testing"

func TestChunkBoundsEachFetch(t *testing.T) {
	var b batch
	for i := 0; i < 600; i++ {
		b.add(string(rune('a'+i%26)), i%2 == 0)
	}
	small := batch{room: "s"}
	small.add("x", true)
	b.room = "big"
	got := chunk([]batch{b, small}, 256)
	sizes := []int{}
	for _, c := range got {
		if len(c.tickets) != len(c.force) || len(c.tickets) > 256 {
			t.Fatalf("chunk of %d tickets, %d force flags", len(c.tickets), len(c.force))
		}
		sizes = append(sizes, len(c.tickets))
	}
	if len(got) != 4 || sizes[0] != 256 || sizes[1] != 256 || sizes[2] != 88 || got[3].room != "s" {
		t.Fatalf("chunks %v", sizes)
	}
	if got[1].force[0] != true || got[1].force[1] != false { // ticket 256 is even, 257 odd
		t.Fatal("force flags moved against their tickets")
	}
}
