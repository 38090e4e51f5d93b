package redisstore

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
