package redisstore

import (
	"strings"
	"testing"
	"time"
)

// TestParseAdmitted: tick.lua's event gives each id its times; an event
// of the release before (ids only) or a times part that does not fit the
// ids gives the ids with zero times.
func TestParseAdmitted(t *testing.T) {
	got := parseAdmitted("a,b,@1000:600000:5:0")
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("ids: %+v", got)
	}
	if !got[0].At.Equal(time.UnixMilli(1000)) || !got[0].Orderable.Equal(time.UnixMilli(1005)) || !got[0].Expires.Equal(time.UnixMilli(601005)) {
		t.Fatalf("a's times: %+v", got[0])
	}
	if !got[1].Orderable.Equal(time.UnixMilli(1000)) || !got[1].Expires.Equal(time.UnixMilli(601000)) {
		t.Fatalf("b's times: %+v", got[1])
	}
	for _, p := range []string{"a,b", "a,b,@1000:600000:5", "a,b,@1000:x:5:0", "a,b,@"} {
		got := parseAdmitted(p)
		if len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" || !got[0].At.IsZero() || !got[1].Expires.IsZero() {
			t.Fatalf("%q: %+v, want a and b without times", p, got)
		}
	}
}

// FuzzParseAdmitted: any payload gives ids without "@" and never panics.
func FuzzParseAdmitted(f *testing.F) {
	for _, p := range []string{"a,b,@1000:600000:5:0", "", "@", ",", "a,@1:2:3", "@@,@"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, a := range parseAdmitted(p) {
			if strings.Contains(a.ID, ",") {
				t.Fatalf("%q: id %q", p, a.ID)
			}
		}
	})
}
