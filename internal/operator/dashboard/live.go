package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/push"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// overviewKey is the rooms list's key on the hub; room ids cannot be "*".
const overviewKey = "*"

// liveFetcher renders what the hub pushes: the room's view, or the
// overview. Views are built from the sampler's memory and this server's
// flags; only the room's settings are read from Redis, so a control
// applied anywhere shows at the next push.
type liveFetcher struct{ d *Dashboard }

var _ push.Fetcher = liveFetcher{}

func (f liveFetcher) Fetch(ctx context.Context, key string, ids []string) ([]push.Update, error) {
	var v any
	if key == overviewKey {
		v = f.d.overview(ctx)
	} else {
		rv, err := f.d.roomView(ctx, key, false)
		if errors.Is(err, queue.ErrRoomNotFound) {
			v = map[string]any{"room": key, "deleted": true}
		} else if err != nil {
			return nil, err
		} else {
			v = rv.view
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]push.Update, len(ids))
	for i, id := range ids {
		// Never a final state: a dashboard stays open until it leaves.
		out[i] = push.Update{Ticket: id, State: vocab.StateWaiting, Interval: f.d.d.PushEvery, Payload: data}
	}
	return out, nil
}

// health is this server's view of Redis, degraded mode and the outbox.
func (d *Dashboard) health(context.Context) templates.AdminHealth {
	h := templates.AdminHealth{RedisUp: d.sampler.redisUp(), Outbox: d.sampler.outboxView()}
	if d.d.Avail != nil {
		st := d.d.Avail.State()
		h.RedisUp = st.RedisUp
		h.Degraded, h.Forced, h.Reason = &st.Degraded, st.Forced, st.Reason
		switch {
		case st.Forced != nil:
			h.ReasonKey = "admin.reason.drill"
		case st.RedisUp:
			h.ReasonKey = "admin.reason.redis_up"
		default:
			h.ReasonKey = "admin.reason.redis_down"
		}
	}
	return h
}

type roomLive struct {
	view   templates.AdminRoomView
	series []templates.AdminPoint
}

// roomView builds a room's live view: settings read now (the last sampled
// ones when Redis does not answer), counts and rates from the latest
// sample, or read now before the first.
func (d *Dashboard) roomView(ctx context.Context, room string, history bool) (roomLive, error) {
	store := d.d.Line
	st, sampled := d.sampler.room(room, history)
	s, err := store.StoredSettings(ctx, room)
	switch {
	case errors.Is(err, queue.ErrRoomNotFound):
		return roomLive{}, err
	case err != nil && !sampled:
		return roomLive{}, err
	case err != nil:
		s = st.settings
	}
	latest := st.latest
	if !sampled {
		now := d.d.Clock.Now()
		stats, err := store.Stats(ctx, room, now)
		if err != nil {
			return roomLive{}, err
		}
		latest = sample{at: now, waiting: stats.Waiting, scheduled: stats.Scheduled, active: stats.Active, capacity: s.Capacity}
	}
	v := templates.AdminRoomView{
		Room: room, Title: s.Title.String(), Titles: s.Title.ByLang(), Paused: s.Paused, Closed: s.Closed(d.d.Clock.Now()), SoldOut: s.SoldOut, Scheduled: s.Scheduled(d.d.Clock.Now()),
		Capacity: s.Capacity, BatchSize: s.BatchSize, BatchIntervalMS: s.BatchIntervalMS,
		ConfiguredRate: s.ConfiguredRate(), Activation: string(s.Activation),
		NoCheckout: s.TargetURL == queue.DefaultSettings().TargetURL,
		Point:      point(latest),
		Health:     d.health(ctx),
	}
	d.lineState(&v)
	if d.d.Waits != nil {
		if p50, p95, ok := d.d.Waits.WaitQuantiles(room); ok {
			v.WaitP50S, v.WaitP95S = seconds(p50), seconds(p95)
		}
	}
	out := roomLive{view: v, series: []templates.AdminPoint{}}
	for _, smp := range st.series {
		out.series = append(out.series, point(smp))
	}
	return out, nil
}

// lineState says whether the room's line is on and why: fixed by the
// settings unless activation is adaptive.
func (d *Dashboard) lineState(v *templates.AdminRoomView) {
	on, off := true, false
	switch queue.Activation(v.Activation) {
	case queue.ActivationAlways:
		v.LineOn, v.LineReasonKey = &on, "admin.line.always"
	case queue.ActivationOff:
		v.LineOn, v.LineReasonKey = &off, "admin.line.off_mode"
	default:
		if d.d.Activation != nil {
			if a, ok := d.d.Activation.ActivationState(v.Room); ok {
				v.LineOn, v.LineSignalError = &a.On, a.SignalError
				num := func(f float64) string { return strconv.FormatFloat(f, 'g', 4, 64) }
				switch a.Cause {
				case "new":
					v.LineReasonKey = "admin.line.new"
				case "opened":
					v.LineReasonKey = "admin.line.opened"
					v.LineReasonArgs = map[string]string{"reading": num(a.Reading), "threshold": num(a.Threshold)}
				case "closed":
					v.LineReasonKey = "admin.line.closed"
					v.LineReasonArgs = map[string]string{"reading": num(a.Reading), "threshold": num(a.Threshold), "windows": strconv.FormatInt(a.Windows, 10)}
				default: // a state kept before causes were
					v.LineReason = a.Reason
				}
				return
			}
		}
		v.LineReasonKey = "admin.line.adaptive_unknown"
	}
}

func point(s sample) templates.AdminPoint {
	return templates.AdminPoint{
		// Waiting counts the pre-queue: people wait there too.
		T: s.at.UnixMilli(), Waiting: s.waiting + s.scheduled, PreQueue: s.scheduled, Active: s.active, Capacity: s.capacity,
		AdmittedPerS: s.admittedRate, EntriesPerS: s.entryRate, AbandonedPerS: s.abandonRate, TailETAS: s.tailETA,
		NoShowsPerMin: perMinute(s.noShowRate), IdlePerMin: perMinute(s.idleRate),
	}
}

// perMinute: lapsed slots are few; per minute they read as whole numbers.
func perMinute(perS *float64) *float64 {
	if perS == nil {
		return nil
	}
	v := *perS * 60
	return &v
}

func seconds(d time.Duration) *float64 {
	s := d.Seconds()
	return &s
}

// overview is the rooms list from the sampler's memory.
func (d *Dashboard) overview(ctx context.Context) templates.AdminOverview {
	order, rooms, listed := d.sampler.overview()
	ov := templates.AdminOverview{Rooms: []templates.AdminRoomSummary{}, Stale: !listed, Health: d.health(ctx)}
	now := d.d.Clock.Now()
	for _, id := range order {
		r, ok := rooms[id]
		if !ok {
			continue
		}
		ov.Rooms = append(ov.Rooms, templates.AdminRoomSummary{
			Room: id, Title: r.settings.Title.String(), Titles: r.settings.Title.ByLang(), Paused: r.settings.Paused, Closed: r.settings.Closed(now), SoldOut: r.settings.SoldOut, Scheduled: r.settings.Scheduled(now),
			Activation: string(r.settings.Activation), Waiting: r.latest.waiting + r.latest.scheduled, PreQueue: r.latest.scheduled, Active: r.latest.active,
			Capacity: r.settings.Capacity, AdmittedPerS: r.latest.admittedRate,
		})
	}
	return ov
}

// handleRoomJSON: GET /admin/rooms/:room/live, the polling rung.
func (d *Dashboard) handleRoomJSON(c echo.Context) error {
	room, ok := roomParam(c)
	if !ok {
		return d.failErr(c, queue.ErrRoomNotFound)
	}
	rv, err := d.roomView(c.Request().Context(), room, false)
	if err != nil {
		return d.failErr(c, err)
	}
	return c.JSON(http.StatusOK, rv.view)
}

// handleOverviewJSON: GET /admin/live, the polling rung of the rooms list.
func (d *Dashboard) handleOverviewJSON(c echo.Context) error {
	return c.JSON(http.StatusOK, d.overview(c.Request().Context()))
}

// handleLive: …/live/ws and …/live/events stream a room's view (or the
// overview) through the dashboard's hub, first message at once. The
// WebSocket accept checks the Origin is this host.
func (d *Dashboard) handleLive(sse bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		key := overviewKey
		var first any
		if c.Param("room") == "" {
			first = d.overview(ctx)
		} else {
			room, ok := roomParam(c)
			if !ok {
				return d.failErr(c, queue.ErrRoomNotFound)
			}
			rv, err := d.roomView(ctx, room, false)
			if err != nil {
				return d.failErr(c, err)
			}
			key, first = room, rv.view
		}
		data, err := json.Marshal(first)
		if err != nil {
			return d.failErr(c, err)
		}
		serve := d.hub.ServeWS
		if sse {
			serve = d.hub.ServeSSE
		}
		err = serve(c.Response(), c.Request(), key, key, push.First{Payload: data})
		if err != nil && !errors.Is(err, push.ErrClosed) && !errors.Is(err, push.ErrSlow) {
			d.log.Debug("dashboard: live stream ended", "key", key, "err", err)
		}
		return nil
	}
}
