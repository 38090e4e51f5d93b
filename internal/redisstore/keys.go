package redisstore

import (
	"strconv"

	"github.com/waitroom/waitroom/internal/hexid"
)

// roomKeys are one room's Redis keys. They share the hash tag {room} so that
// every script's keys live in one Redis Cluster slot.
type roomKeys struct {
	settings, visitors, tickets, seq, q, seen, active, ended, budget, stats, admits, events, activation string
	// admitter is the room's admitter lease (lease.lua).
	admitter string
	// pre is the pre-queue of a scheduled opening, draw the record of its draw.
	pre, draw string
	// log is the change log: a stream of the scores that enter and leave q.
	log string
	// powSpent prefixes the spent marks of proof-of-work challenges.
	powSpent string
}

// Keys of the deployment, beside the rooms'.
func (s *Store) roomsKey() string { return s.prefix + "rooms" }
func (s *Store) epochKey() string { return s.prefix + "epoch" }
func (s *Store) drillKey() string { return s.prefix + "drill" }
func (s *Store) aliveKey() string { return s.prefix + "alive" }

// roomBase is the start of every key of room: the prefix and the hash tag.
func roomBase(prefix, room string) string { return prefix + "{" + room + "}:" }

// ActivationKey is the hash in which internal/adaptive keeps room's activation.
func ActivationKey(prefix, room string) string { return roomBase(prefix, room) + "activation" }

func holderKey(prefix, room, ticket string) string {
	return roomBase(prefix, room) + "holder:" + ticket
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
		draw:     b + "draw",
		log:      b + "log",
		// activation is kept by internal/adaptive; listed so DeleteRoom removes it.
		activation: ActivationKey(prefix, room),
		powSpent:   b + "pow:",
		admitter:   b + "admitter",
	}
}

// pow is the spent mark of one proof-of-work challenge. It expires with the
// challenge, so DeleteRoom need not find it.
func (k roomKeys) pow(id string) string { return k.powSpent + id }

func (k roomKeys) all() []string {
	return []string{k.settings, k.visitors, k.tickets, k.seq, k.q, k.seen, k.active, k.ended, k.budget, k.stats, k.admits, k.activation, k.admitter, k.pre, k.draw, k.log}
}

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
