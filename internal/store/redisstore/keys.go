package redisstore

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/waitroom/waitroom/internal/httpkit/hexid"
)

// roomKeys are one room's Redis keys. They share the hash tag {room} so that
// every script's keys live in one Redis Cluster slot.
type roomKeys struct {
	settings, visitors, tickets, seq, q, seen, active, ended, budget, stats, admits, events, activation string
	// admitter is the room's admitter lease (lease.lua).
	admitter string
	// pre is the pre-queue of a scheduled opening, pren the network each of
	// its places came from (ticket id -> network), draw the record of its draw.
	pre, pren, draw string
	// net is the network of each place in line whose member is not a seq
	// (a test's); a seq's is in the bucket n:<seq/32> (buckets). The
	// per-network counts (un:<network>) expire on their own (lua/record.lua).
	net string
	// log is the change log: a stream of the scores that enter and leave q.
	log string
	// present holds each server's latest snapshot of its open connections;
	// a server's bitmap is present+":"+server (lua/present.lua).
	present string
	// base starts every key of the room; the scripts build the bucketed
	// keys from it (lua/record.lua): t:<seq/32> records, s:<seq/32> signs
	// of life, v:<n> visitors. settings..visitors, tickets and seen above
	// hold the tickets of the releases before, until they end. enter.lua
	// names every key from it, pow:<challenge id> too: the spent mark of a
	// proof-of-work challenge, which expires with the challenge, so
	// DeleteRoom need not find it.
	base string
}

// bucketSize is how many seqs share a t: and an s: bucket (lua/record.lua).
const bucketSize = 32

// buckets are the names of the room's bucketed keys that may exist: every
// t:, s: and n: bucket up to seq, every v: bucket below vb.
func (k roomKeys) buckets(seq, vb int64) []string {
	out := make([]string, 0, 3*(seq/bucketSize+1)+vb)
	for b := int64(0); b <= seq/bucketSize; b++ {
		n := strconv.FormatInt(b, 10)
		out = append(out, k.base+"t:"+n, k.base+"s:"+n, k.base+"n:"+n)
	}
	for b := int64(0); b < max(vb, 1); b++ {
		out = append(out, k.base+"v:"+strconv.FormatInt(b, 10))
	}
	return out
}

// Keys of the deployment, beside the rooms'.
func (s *Store) roomsKey() string { return s.prefix + "rooms" }
func (s *Store) epochKey() string { return s.prefix + "epoch" }
func (s *Store) drillKey() string { return s.prefix + "drill" }
func (s *Store) aliveKey() string { return s.prefix + "alive" }

// roomBase is the start of every key of room: the prefix and the hash tag.
func roomBase(prefix, room string) string { return prefix + "{" + room + "}:" }

// ActivationKey is the hash in which internal/operator/adaptive keeps room's activation.
func ActivationKey(prefix, room string) string { return roomBase(prefix, room) + "activation" }

func holderKey(prefix, room, ticket string) string {
	return roomBase(prefix, room) + "holder:" + ticket
}

// handoffKey marks a redeemed hand-off code until it expires.
func handoffKey(prefix, room, ticket, nonce string) string {
	return roomBase(prefix, room) + "code:" + ticket + ":" + nonce
}

func placesKey(prefix, room, bucket string) string {
	return roomBase(prefix, room) + "places:" + bucket
}

func entersKey(prefix, room, bucket string) string {
	return roomBase(prefix, room) + "enters:" + bucket
}

func keysFor(prefix, room string) roomKeys {
	b := roomBase(prefix, room)
	return roomKeys{
		settings: b + "settings",
		visitors: b + "visitors",
		tickets:  b + "tickets",
		seq:      b + "seq",
		q:        b + "q",
		seen:     b + "seen",
		active:   b + "active",
		ended:    b + "ended",
		budget:   b + "budget",
		stats:    b + "stats",
		admits:   b + "admits",
		events:   b + "events",
		pre:      b + "pre",
		pren:     b + "pren",
		net:      b + "net",
		draw:     b + "draw",
		log:      b + "log",
		// activation is kept by internal/operator/adaptive; listed so DeleteRoom removes it.
		activation: ActivationKey(prefix, room),
		admitter:   b + "admitter",
		present:    b + "pr",
		base:       b,
	}
}

func (k roomKeys) all() []string {
	return []string{k.settings, k.visitors, k.tickets, k.seq, k.q, k.seen, k.active, k.ended, k.budget, k.stats, k.admits, k.activation, k.admitter, k.pre, k.pren, k.net, k.draw, k.log, k.present}
}

// bits is server's snapshot bitmap (lua/present.lua).
func (k roomKeys) bits(server string) string { return k.present + ":" + server }

// newTail is what enter.lua makes a new ticket's id of: the last 20 digits
// of a 32-hex random id, after the ticket's seq (lua/record.lua). Any other
// id (tests pass their own) goes whole, and the ticket is kept under it.
func newTail(id string) string {
	if hexid.Valid(id) {
		return id[hexid.Len-tailLen:]
	}
	return id
}

// tailLen is the random part of a ticket id; the rest is the seq.
const tailLen = 20

// tailBytes is a new ticket's tail as its record keeps it: 10 bytes
// (lua/record.lua); "" for an id that is not ours.
func tailBytes(tail string) string {
	if len(tail) != tailLen {
		return ""
	}
	b, err := hex.DecodeString(tail)
	if err != nil {
		return ""
	}
	return string(b)
}

// packIdentity is identity as the records keep it (lua/record.lua pack): a
// cookie visitor's ("v:" and 32 lower-case hex) as v and its 16 bytes, any
// other as i and itself.
func packIdentity(identity string) string {
	if len(identity) == 34 && strings.HasPrefix(identity, "v:") && isLowerHex(identity[2:]) {
		b, _ := hex.DecodeString(identity[2:])
		return "v" + string(b)
	}
	return "i" + identity
}

// unpackIdentity is packIdentity's inverse.
func unpackIdentity(packed string) string {
	if len(packed) == 17 && packed[0] == 'v' {
		return "v:" + hex.EncodeToString([]byte(packed[1:]))
	}
	if len(packed) > 0 && packed[0] == 'i' {
		return packed[1:]
	}
	return packed
}

// visitorField is a packed identity's field in the visitors buckets (lua/record.lua
// vfield): 8 bytes, a cookie identity's own (it is a hash already), else
// the first 8 of its SHA-1.
func visitorField(packed string) string {
	if len(packed) == 17 && packed[0] == 'v' {
		return packed[1:9]
	}
	sum := sha1.Sum([]byte(packed[1:]))
	return string(sum[:8])
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// stamp36 is a time in ms as the records keep it: 8 base-36 digits.
func stamp36(ms int64) string {
	s := strconv.FormatInt(ms, 36)
	if len(s) < 8 {
		s = strings.Repeat("0", 8-len(s)) + s
	}
	return s
}

// membersOf is what a ticket may be kept under in the room's sets
// (lua/record.lua): its seq, read from the id's first 12 digits, or, for a
// ticket from before the compact records, the id itself. An id of ours that
// could be either names both; a member that is not there costs nothing to
// the ZADD XX that uses this.
func membersOf(id string) []string {
	if len(id) != hexid.Len {
		return []string{id}
	}
	seq, err := strconv.ParseUint(id[:hexid.Len-tailLen], 10, 64)
	if err != nil {
		return []string{id}
	}
	return []string{strconv.FormatUint(seq, 10), id}
}
