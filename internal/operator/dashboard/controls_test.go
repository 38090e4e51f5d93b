package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

func TestControlsChangeTheStoredSettings(t *testing.T) {
	site := newSite(t, siteOptions{})
	site.putRoom("drop", queue.DefaultSettings())
	b := site.browser()
	b.signIn()
	jsonPost := func(form url.Values) page {
		return b.post("/admin/rooms/drop/controls", form, "Accept", "application/json", "X-CSRF-Token", b.csrf)
	}

	// Pause and resume as forms: back to the page, which says so.
	p := b.postForm("/admin/rooms/drop/controls", url.Values{"paused": {"true"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/admin/rooms/drop?saved=1" || !site.getRoom("drop").Paused {
		t.Fatalf("pause: %d %q", p.status, p.header.Get("Location"))
	}
	p = b.get("/admin/rooms/drop?saved=1")
	if !shown(p, "control-status") || byTestID(t, p, "control-pause") != templates.T(templates.English, "admin.control.resume") {
		t.Errorf("after pause the page shows %q", byTestID(t, p, "control-pause"))
	}
	if p := jsonPost(url.Values{"paused": {"false"}}); p.status != http.StatusOK || site.getRoom("drop").Paused {
		t.Errorf("resume: %d %s", p.status, p.body)
	}

	// Pace and capacity together; the answer is the stored settings.
	p = jsonPost(url.Values{"batch_size": {"3"}, "batch_interval_ms": {"500"}, "capacity": {"40"}})
	var got queue.Settings
	if err := json.Unmarshal([]byte(p.body), &got); err != nil || p.status != http.StatusOK || got.BatchSize != 3 || got.BatchIntervalMS != 500 || got.Capacity != 40 {
		t.Fatalf("pace: %d %s", p.status, p.body)
	}
	if s := site.getRoom("drop"); s.BatchSize != 3 || s.BatchIntervalMS != 500 || s.Capacity != 40 || s.JitterMS != 1000 {
		t.Errorf("stored after pace %+v", s)
	}

	// A bad value: the admin API's message, for its field, and nothing stored.
	p = jsonPost(url.Values{"batch_size": {"3"}, "batch_interval_ms": {"20"}, "capacity": {"40"}})
	var e struct {
		Error struct{ Code, Field, Message, Text string }
	}
	if err := json.Unmarshal([]byte(p.body), &e); err != nil || p.status != http.StatusBadRequest || e.Error.Field != "batch_interval_ms" ||
		e.Error.Message != apiMessage(t, `{"batch_interval_ms": 20}`) || e.Error.Text != saidIn(t, templates.English, `{"batch_interval_ms": 20}`) {
		t.Errorf("bad pace: %d %s", p.status, p.body)
	}
	p = b.postForm("/admin/rooms/drop/controls", url.Values{"capacity": {"lots"}})
	if p.status != http.StatusBadRequest || byTestID(t, p, "control-error-capacity") != saidIn(t, templates.English, `{"capacity": "lots"}`) {
		t.Errorf("bad capacity as a form: %d", p.status)
	}
	if s := site.getRoom("drop"); s.BatchIntervalMS != 500 || s.Capacity != 40 {
		t.Errorf("a refused control changed the room: %+v", s)
	}

	// Activation: off and back; adaptive needs its thresholds (edit form).
	if p := jsonPost(url.Values{"activation": {"off"}}); p.status != http.StatusOK || site.getRoom("drop").Activation != "off" {
		t.Errorf("activation off: %d", p.status)
	}
	p = jsonPost(url.Values{"activation": {"adaptive"}})
	if json.Unmarshal([]byte(p.body), &e) != nil || p.status != http.StatusBadRequest || e.Error.Field != "adaptive" {
		t.Errorf("adaptive without thresholds: %d %s", p.status, p.body)
	}
	if p := jsonPost(url.Values{"activation": {"always"}}); p.status != http.StatusOK || site.getRoom("drop").Activation != "always" {
		t.Errorf("activation always: %d", p.status)
	}
}

func TestDegradeDrill(t *testing.T) {
	site := newSite(t, siteOptions{})
	site.putRoom("drop", queue.DefaultSettings())
	b := site.browser()
	b.signIn()
	drill := func() *bool {
		on, err := site.line.Probe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return on
	}
	p := b.postForm("/admin/degrade", url.Values{"mode": {"on"}, "back": {"/admin/rooms/drop"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/admin/rooms/drop" {
		t.Fatalf("drill on: %d %q", p.status, p.header.Get("Location"))
	}
	if st := site.avail.State(); !st.Degraded || st.Forced == nil || !*st.Forced {
		t.Errorf("after drill on: %+v", st)
	}
	if on := drill(); on == nil || !*on {
		t.Errorf("drill for the other servers: %v", on)
	}
	p = b.get("/admin/rooms/drop")
	if got := byTestID(t, p, "stat-degraded"); got != "on (drill)" {
		t.Errorf("the page says degraded %q", got)
	}
	if v, _ := p.doc.Find(`[data-testid="control-degrade-on"]`).Attr("aria-pressed"); v != "true" {
		t.Errorf("drill button not pressed")
	}
	if p := b.post("/admin/degrade", url.Values{"mode": {"auto"}}, "Accept", "application/json", "X-CSRF-Token", b.csrf); p.status != http.StatusOK {
		t.Errorf("drill auto: %d %s", p.status, p.body)
	}
	if st := site.avail.State(); st.Degraded || st.Forced != nil || drill() != nil {
		t.Errorf("after auto: %+v", st)
	}
	if p := b.postForm("/admin/degrade", url.Values{"mode": {"maybe"}}); p.status != http.StatusBadRequest {
		t.Errorf("bad mode: %d", p.status)
	}
}

// A control takes effect within one admission tick: of the ticks that end
// after the change was answered, the first may have started before it, and
// every one after that runs on the new settings.
func TestControlsTakeEffectWithinOneTick(t *testing.T) {
	site := newSite(t, siteOptions{})
	s := queue.DefaultSettings()
	s.BatchSize, s.BatchIntervalMS, s.AbandonAfterS = 1, 100, 300
	site.putRoom("drop", s)
	for i := range 50 {
		if _, _, err := site.line.Enter(context.Background(), "drop", "visitor-"+string(rune('a'+i%26))+string(rune('a'+i/26))); err != nil {
			t.Fatal(err)
		}
	}
	type tick struct {
		paused   bool
		admitted int
	}
	ticks := make(chan tick, 1024)
	adm := queue.NewAdmitter(site.line)
	adm.OnTick = func(room string, st queue.Settings, r queue.TickResult) {
		if room == "drop" {
			ticks <- tick{st.Paused, len(r.Admitted)}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = adm.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	// Ticking, and admitting.
	deadline := time.After(wait)
	for admitted := 0; admitted == 0; {
		select {
		case tk := <-ticks:
			admitted += tk.admitted
		case <-deadline:
			t.Fatal("no admissions before the pause")
		}
	}
	b := site.browser()
	b.signIn()
	if p := b.post("/admin/rooms/drop/controls", url.Values{"paused": {"true"}}, "Accept", "application/json", "X-CSRF-Token", b.csrf); p.status != http.StatusOK {
		t.Fatalf("pause: %d", p.status)
	}
	for len(ticks) > 0 { // ticks that ended before the answer
		<-ticks
	}
	for i := range 4 {
		select {
		case tk := <-ticks:
			if i > 0 && (!tk.paused || tk.admitted != 0) {
				t.Errorf("tick %d after the pause: %+v", i+1, tk)
			}
		case <-time.After(wait):
			t.Fatal("the admission loop stopped ticking")
		}
	}
}
