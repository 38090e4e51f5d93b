package redisstore

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// record is a ticket as the scripts keep it (lua/record.lua).
type record struct {
	Identity  string      `json:"i"`
	Seq       float64     `json:"s"`
	State     vocab.State `json:"st"`
	Reason    string      `json:"r"`
	Entered   float64     `json:"e"`
	Admitted  float64     `json:"a"`
	Orderable float64     `json:"o"`
	Expires   float64     `json:"x"`
	EntryPos  float64     `json:"p"`
}

// states are the record's states: their first letter (lua/record.lua).
var states = map[byte]vocab.State{'w': vocab.StateWaiting, 'a': vocab.StateAdmitted, 's': vocab.StateScheduled, 'e': vocab.StateExpired}

// parseRecord reads a record in either encoding: the compact one of
// lua/record.lua, or the JSON of tickets written before it (numbers there
// are float64 because Lua's cjson may write big integers as 1.7e+12).
func parseRecord(s string) (record, error) {
	var rec record
	if strings.HasPrefix(s, "{") {
		err := json.Unmarshal([]byte(s), &rec)
		return rec, err
	}
	if len(s) > 0 && s[0] >= 'A' && s[0] <= 'Z' {
		return parseBucketRecord(s)
	}
	// <state><tail>|<seq>|<entered>|<pos>|<admitted>|<orderable>|<expires>|<reason>|<identity>
	f := strings.SplitN(s, "|", 9)
	if len(f) != 9 || len(f[0]) == 0 || states[f[0][0]] == "" {
		return rec, fmt.Errorf("not a record: %q", s)
	}
	nums := [6]float64{}
	for i := range nums {
		if f[i+1] == "" {
			continue
		}
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return rec, fmt.Errorf("record field %d: %w", i+1, err)
		}
		nums[i] = float64(n)
	}
	rec.State, rec.Reason, rec.Identity = states[f[0][0]], f[7], f[8]
	if rec.Reason == "arrived" { // an admitted ticket's mark (lua/record.lua), no reason
		rec.Reason = ""
	}
	rec.Seq, rec.Entered, rec.EntryPos = nums[0], nums[1], nums[2]
	rec.Admitted, rec.Orderable, rec.Expires = nums[3], nums[4], nums[5]
	return rec, nil
}

// bucketStates are this release's record states (lua/record.lua).
var bucketStates = map[byte]vocab.State{'W': vocab.StateWaiting, 'A': vocab.StateAdmitted, 'S': vocab.StateScheduled, 'E': vocab.StateExpired}

// reasons are the reason letters (lua/record.lua); an admitted record's
// "v" (its visitor arrived) is no reason.
var reasons = map[string]string{"a": vocab.ReasonAbandoned, "r": vocab.ReasonReclaimed, "l": vocab.ReasonLeft,
	"c": vocab.ReasonCompleted, "n": vocab.ReasonNoShow, "i": vocab.ReasonIdle}

// parseBucketRecord reads this release's record:
// <S><entered: 8 base-36>< entry position>|<admitted-entered>|<orderable-admitted>|<expires-orderable>|<reason>|<tail: 10 bytes><packed identity>
func parseBucketRecord(s string) (record, error) {
	var rec record
	if len(s) < 9 || bucketStates[s[0]] == "" {
		return rec, fmt.Errorf("not a record: %q", s)
	}
	e, err := strconv.ParseInt(s[1:9], 36, 64)
	if err != nil {
		return rec, fmt.Errorf("record entered: %w", err)
	}
	f := strings.SplitN(s[9:], "|", 6)
	if len(f) != 6 || len(f[5]) < 10 {
		return rec, fmt.Errorf("not a record: %q", s)
	}
	rec.State, rec.Entered, rec.Identity = bucketStates[s[0]], float64(e), unpackIdentity(f[5][10:])
	if f[0] != "" {
		p, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return rec, fmt.Errorf("record position: %w", err)
		}
		rec.EntryPos = float64(p)
	}
	if f[4] != "" {
		rec.Reason = reasons[f[4]]
	}
	if f[1] != "" {
		var d [3]int64
		for i := range d {
			if d[i], err = strconv.ParseInt(f[1+i], 36, 64); err != nil {
				return rec, fmt.Errorf("record time %d: %w", i, err)
			}
		}
		rec.Admitted = float64(e + d[0])
		rec.Orderable = rec.Admitted + float64(d[1])
		rec.Expires = rec.Orderable + float64(d[2])
	}
	return rec, nil
}

func decodeStatus(room, id string, res []any, now time.Time) (queue.Ticket, error) {
	if len(res) != 4 && len(res) != 5 { // status.lua adds a waiting ticket's score
		return queue.Ticket{}, fmt.Errorf("redisstore: status: unexpected reply %v", res)
	}
	return decodeTicket(room, id, res[0], res[1], res[2], res[3], now)
}

func decodeTicket(room, id string, raw, rank, waiting, rate any, now time.Time) (queue.Ticket, error) {
	s, _ := raw.(string)
	rec, err := parseRecord(s)
	if err != nil {
		return queue.Ticket{}, fmt.Errorf("redisstore: decode ticket %s: %w", id, err)
	}
	t := queue.Ticket{
		Room: room, ID: id, Identity: rec.Identity, State: queue.State(rec.State), Reason: rec.Reason,
		Seq: int64(rec.Seq), EntryPosition: int64(rec.EntryPos), Waiting: toInt(waiting), EnteredAt: time.UnixMilli(int64(rec.Entered)),
	}
	if t.Seq == 0 && len(id) == 32 { // this release's records: the seq is in the id
		t.Seq, _ = strconv.ParseInt(id[:12], 10, 64)
	}
	if r, ok := rate.(string); ok {
		t.Rate, _ = strconv.ParseFloat(r, 64)
	}
	if r := toInt(rank); t.State == vocab.StateWaiting && r >= 0 {
		t.Position = r + 1
	}
	if rec.Admitted > 0 {
		t.AdmittedAt = time.UnixMilli(int64(rec.Admitted))
		t.OrderableAt = time.UnixMilli(int64(rec.Orderable))
		t.ExpiresAt = time.UnixMilli(int64(rec.Expires))
	}
	t.Settle(now)
	return t, nil
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}
