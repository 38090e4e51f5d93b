package token_test

import (
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/visitor/token"
)

func TestVisitorIDsAreRecognisedOnlyByTheirKeys(t *testing.T) {
	ks, _ := token.Generate()
	other, _ := token.Generate()
	id := ks.NewVisitorID()
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		t.Fatalf("id %q, want 32 hex", id)
	}
	if id == ks.NewVisitorID() {
		t.Fatal("two ids alike")
	}
	if !ks.IssuedVisitorID(id) {
		t.Error("own id not recognised")
	}
	if other.IssuedVisitorID(id) {
		t.Error("another deployment's id recognised")
	}
	forged := id[:31] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", id[31])+1)%16])
	for _, bad := range []string{forged, "0123456789abcdef0123456789abcdef", "", "zz", strings.ToUpper(id)} {
		if ks.IssuedVisitorID(bad) {
			t.Errorf("%q recognised", bad)
		}
	}
}
