package token_test

import (
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/token"
)

func TestHandoffCodesNameTheirTicketOnlyInTheirRoomAndMinute(t *testing.T) {
	ks, _ := token.Generate()
	other, _ := token.Generate()
	now := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	const ticket = "000000000001e91169604ac9ea8eac81"
	code := ks.NewHandoff("sale", ticket, now)
	if !strings.HasPrefix(code, "h.") || len(code) > 100 {
		t.Fatalf("code %q", code)
	}
	if again := ks.NewHandoff("sale", ticket, now); again == code {
		t.Fatal("two codes alike: a spent code would be handed out again")
	}
	h, err := ks.ParseHandoff(code, "sale", now.Add(token.HandoffTTL-time.Second))
	if err != nil || h.Ticket != ticket || h.Room != "sale" || len(h.Nonce) != 16 {
		t.Fatalf("parse: %+v %v", h, err)
	}
	for name, c := range map[string]struct {
		code, room string
		at         time.Time
		ks         *token.Keyset
	}{
		"expired":      {code, "sale", now.Add(token.HandoffTTL), ks},
		"another room": {code, "drop", now, ks},
		"another key":  {code, "sale", now, other},
		"tampered":     {code[:len(code)-2] + flip(code[len(code)-2]) + code[len(code)-1:], "sale", now, ks},
		"a token":      {"eyJ.eyJ.sig", "sale", now, ks},
		"empty":        {"", "sale", now, ks},
		"prefix only":  {"h.", "sale", now, ks},
		"overlong":     {"h." + strings.Repeat("A", 500), "sale", now, ks},
		"bad base64":   {"h.!!!!", "sale", now, ks},
		"length lies":  {"h.AAAA", "sale", now, ks},
	} {
		if _, err := c.ks.ParseHandoff(c.code, c.room, c.at); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func TestShopKeysAreOnePerRoom(t *testing.T) {
	ks, _ := token.Generate()
	other, _ := token.Generate()
	k := ks.ShopKey("sale")
	if !strings.HasPrefix(k, "wrs_") || len(k) != 44 {
		t.Fatalf("key %q", k)
	}
	if !ks.IsShopKey("sale", k) {
		t.Error("own key refused")
	}
	for name, ok := range map[string]bool{
		"another room":       ks.IsShopKey("drop", k),
		"another deployment": other.IsShopKey("sale", k),
		"empty":              ks.IsShopKey("sale", ""),
		"a prefix":           ks.IsShopKey("sale", k[:20]),
	} {
		if ok {
			t.Errorf("%s: accepted", name)
		}
	}
}
