package token_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/token"
)

// TestPlaceMarksAreBoundToRoomVisitorKeyAndAge: a mark passes for its own
// room and visitor under its deployment's keys within its age, and for
// nothing else.
func TestPlaceMarksAreBoundToRoomVisitorKeyAndAge(t *testing.T) {
	ks, _ := token.Generate()
	other, _ := token.Generate()
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	vid := ks.NewVisitorID()
	mark := ks.PlaceMark("sale", vid, now)
	const day = 24 * time.Hour
	if !ks.CheckPlaceMark("sale", vid, mark, now.Add(time.Hour), day) {
		t.Fatal("own mark refused")
	}
	ts, sum, _ := strings.Cut(mark, ".")
	flipped := sum[:31] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", sum[31])+1)%16])
	for name, ok := range map[string]bool{
		"another room":       ks.CheckPlaceMark("drop", vid, mark, now, day),
		"another visitor":    ks.CheckPlaceMark("sale", ks.NewVisitorID(), mark, now, day),
		"another deployment": other.CheckPlaceMark("sale", vid, mark, now, day),
		"too old":            ks.CheckPlaceMark("sale", vid, mark, now.Add(day+time.Second), day),
		"from the future":    ks.CheckPlaceMark("sale", vid, mark, now.Add(-2*time.Minute), day),
		"a flipped MAC":      ks.CheckPlaceMark("sale", vid, ts+"."+flipped, now, day),
		"another time":       ks.CheckPlaceMark("sale", vid, strconv.FormatInt(now.Unix()-1, 10)+"."+sum, now, day),
		"a second spelling":  ks.CheckPlaceMark("sale", vid, "0"+mark, now, day),
		"empty":              ks.CheckPlaceMark("sale", vid, "", now, day),
		"no MAC":             ks.CheckPlaceMark("sale", vid, ts, now, day),
	} {
		if ok {
			t.Errorf("%s: mark accepted", name)
		}
	}
}
