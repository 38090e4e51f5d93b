package token

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// A place mark says, without Redis, that a visitor id held a place in a
// room: waitroom hands one out beside the visitor cookie whenever it gives
// that visitor a place, as "<unix seconds>.<32 hex of a MAC>" over the room,
// the id and the time, under a secret derived from the signing keys that
// every server of a deployment shares. The visitor cookie alone costs
// nothing to get (GET …/challenge draws one), so while Redis is down it is
// the mark that tells a visitor who was in the line from one minted to buy
// intents.

// PlaceMark marks visitor id vid as having held a place in room at at.
func (ks *Keyset) PlaceMark(room, vid string, at time.Time) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	return ts + "." + hex.EncodeToString(ks.placeMAC(0, room, vid, ts))
}

// CheckPlaceMark reports whether mark is PlaceMark's for room and vid,
// under any key of the keyset, made no more than maxAge before now (and
// not after it, but for a minute of clock skew between servers).
func (ks *Keyset) CheckPlaceMark(room, vid, mark string, now time.Time, maxAge time.Duration) bool {
	ts, sum, ok := strings.Cut(mark, ".")
	if !ok || len(ts) > 12 || len(sum) != 32 {
		return false
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || strconv.FormatInt(sec, 10) != ts {
		return false // one spelling, as made
	}
	at := time.Unix(sec, 0)
	if now.Sub(at) > maxAge || at.Sub(now) > time.Minute {
		return false
	}
	got, err := hex.DecodeString(sum)
	if err != nil {
		return false
	}
	for i := range ks.keys {
		if hmac.Equal(got, ks.placeMAC(i, room, vid, ts)) {
			return true
		}
	}
	return false
}

func (ks *Keyset) placeMAC(i int, room, vid, ts string) []byte {
	if i >= len(ks.keys) {
		return nil
	}
	m := hmac.New(sha256.New, ks.deriveAt(i, "place-mark"))
	m.Write([]byte(room + "\x00" + vid + "\x00" + ts))
	return m.Sum(nil)[:16]
}
