package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/hexid"
	"github.com/waitroom/waitroom/internal/push"
	"github.com/waitroom/waitroom/queue"
)

// manyReader is what the push fetcher needs of the line.
type manyReader interface {
	ticketViewer
	cachedRooms
	Settings(ctx context.Context, room string) (queue.Settings, error)
	StatusMany(ctx context.Context, room string, ids []string) ([]queue.Ticket, queue.Settings, error)
}

// pushFetcher answers the hub's fetches: a waiting ticket's update from
// this server's view of the line (local, no store read per waiter) when it
// can, else the tickets read from the store in one pipelined round trip;
// each rendered as the ticket JSON.
type pushFetcher struct {
	line  manyReader
	deg   degradeFlag
	local *localPositions // nil: every update reads the store
}

var _ push.Fetcher = pushFetcher{}

func (f pushFetcher) Fetch(ctx context.Context, room string, ids []string) ([]push.Update, error) {
	if f.deg.Degraded() {
		return f.bypassed(room, ids)
	}
	ts := make([]queue.Ticket, len(ids))
	var read []int // indexes of ids to read from the store
	var s queue.Settings
	if f.local != nil {
		f.local.pos.Watch(room)
		now := time.Now()
		for i, id := range ids {
			t, ok := f.local.local(room, id, now)
			if !ok {
				read = append(read, i)
				continue
			}
			ts[i] = t
		}
		if len(read) < len(ids) {
			var err error
			if s, err = f.line.Settings(ctx, room); err != nil {
				return nil, err
			}
			for i := range ts {
				ts[i].Show(&s)
			}
		}
	} else {
		for i := range ids {
			read = append(read, i)
		}
	}
	if len(read) > 0 {
		var gen int64
		if f.local != nil {
			gen = f.local.gen.Load()
		}
		want := make([]string, len(read))
		for j, i := range read {
			want[j] = ids[i]
		}
		got, rs, err := f.line.StatusMany(ctx, room, want)
		if err != nil {
			return nil, err
		}
		s = rs
		for j, i := range read {
			ts[i] = got[j]
		}
		if f.local != nil {
			f.local.remember(room, got, gen, time.Now())
		}
	}
	out := make([]push.Update, len(ts))
	for i, t := range ts {
		v, err := f.line.View(t, &s)
		if err == nil {
			out[i], err = pushUpdate(ids[i], v)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pushUpdate is a ticket's view as the hub sends it.
func pushUpdate(id string, v queue.View) (push.Update, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return push.Update{}, err
	}
	return push.Update{Ticket: id, State: v.State, Interval: v.NextUpdate(), Payload: data}, nil
}

// bypassed tells open pages to switch to the accept page: Redis is down.
func (f pushFetcher) bypassed(room string, ids []string) ([]push.Update, error) {
	out := make([]push.Update, len(ids))
	for i, id := range ids {
		v, err := bypassed(f.line, room, id)
		if err == nil {
			out[i], err = pushUpdate(id, v)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pushFirst is a push connection's first message, and the ticket it was
// read from (none while degraded). While degraded it is the bypassed
// answer, without asking Redis: the page then moves to the accept page over
// the connection it opened.
func pushFirst(c echo.Context, line statusReader, ids identities, deg degradeFlag, local *localPositions) (room, id string, t queue.Ticket, v queue.View, err error) {
	if deg.Degraded() {
		if room, err = roomParam(c); err != nil {
			return "", "", t, v, err
		}
		id = c.Param("ticket")
		if !hexid.Valid(id) {
			return "", "", t, v, errTicketNotFound
		}
		v, err = bypassed(line, room, id)
		return room, id, t, v, err
	}
	room, id, identity, err := ticketOwner(c, line, ids)
	if err != nil {
		return "", "", t, v, err
	}
	var s queue.Settings
	kept, ok := queue.Ticket{}, false
	if local != nil {
		kept, ok = local.first(room, id, identity, time.Now())
	}
	if ok {
		// This server entered the ticket a moment ago: no read.
		if s, err = line.Settings(c.Request().Context(), room); err != nil {
			return "", "", t, v, err
		}
		t = kept
		t.Show(&s)
	} else if t, s, err = line.Status(c.Request().Context(), room, id, identity); err != nil {
		return "", "", t, v, err
	}
	v, err = line.View(t, &s)
	return t.Room, t.ID, t, v, err
}

// handlePush: GET /api/rooms/:room/tickets/:ticket/ws and …/events. Same
// visitor check as the status endpoint; the first message is sent at once.
// A waiting ticket read for it is kept in local (when not nil), and the hub
// told that the message is current: the ticket's next update then comes at
// its tier slot from this server's view of the line, without reading the
// store a second time.
func handlePush(line statusReader, ids identities, deg degradeFlag, hub *push.Hub, local *localPositions, sse bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		mark := hub.NoticeMark()
		var gen int64
		if local != nil {
			gen = local.gen.Load()
		}
		room, id, t, v, err := pushFirst(c, line, ids, deg, local)
		if err != nil {
			return err
		}
		u, err := pushUpdate(id, v)
		if err != nil {
			return err
		}
		first := push.First{Payload: u.Payload}
		if local != nil && t.ID == id && local.remembered(room, t, gen, time.Now()) {
			first.State, first.Interval, first.Mark = u.State, u.Interval, mark
		}
		serve := hub.ServeWS
		if sse {
			serve = hub.ServeSSE
		}
		err = serve(c.Response(), c.Request(), room, id, first)
		if errors.Is(err, push.ErrClosed) {
			return errUnavailable
		}
		if err != nil && !errors.Is(err, push.ErrSlow) {
			return err
		}
		return nil
	}
}
