package dashboard_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// seedSale writes minutes of a past sale of room into the site's history:
// each minute 50 arrive, 40 are admitted having waited (10+i) seconds, 2
// give up; the line peaks at the middle minute. It returns the first minute.
func seedSale(t *testing.T, s *site, room string, minutes int) time.Time {
	t.Helper()
	ctx := context.Background()
	start := time.Now().UTC().Truncate(time.Minute).Add(-time.Duration(minutes+5) * time.Minute)
	for i := range minutes {
		at := start.Add(time.Duration(i) * time.Minute)
		line := int64(100 + 10*min(i, minutes-i))
		r := history.Reading{Waiting: line, Active: 40, Entered: int64(50 * i), Admitted: int64(40 * i), Abandoned: int64(2 * i)}
		if _, err := s.hist.Record(ctx, room, at, r); err != nil {
			t.Fatal(err)
		}
		waits := make([]time.Duration, 40)
		for j := range waits {
			waits[j] = time.Duration(10+i) * time.Second
		}
		s.hist.ObserveWaits(room, at, waits...)
	}
	if err := s.hist.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return start
}

func TestRoomPageDrawsTheWholeSale(t *testing.T) {
	site := newSite(t, siteOptions{history: true})
	site.putRoom("drop", queue.DefaultSettings())
	const minutes = 40
	start := seedSale(t, site, "drop", minutes)
	b := site.browser()
	b.signIn()
	pageDoc := func(path string) *goquery.Document {
		t.Helper()
		p := b.get(path)
		if p.status != http.StatusOK || p.doc == nil {
			t.Fatalf("%s: %d %s", path, p.status, p.body)
		}
		return p.doc
	}

	// The live page: 15 minutes of samples, and the links to the rest.
	doc := pageDoc("/admin/rooms/drop")
	if doc.Find(`[data-range="live"]`).Length() != 1 || doc.Find(`[data-testid="range-sale"]`).AttrOr("href", "") != "/admin/rooms/drop?range=sale" {
		t.Fatalf("live page: no range links")
	}
	doc = pageDoc("/admin/rooms/drop?range=sale")
	if doc.Find(`[data-range="range"]`).Length() != 1 || doc.Find(`[data-testid="range-sale"][aria-current="page"]`).Length() != 1 {
		t.Fatal("whole sale page: not marked as a range")
	}
	var pts []templates.AdminPoint
	if err := json.Unmarshal([]byte(doc.Find("#admin-series").Text()), &pts); err != nil {
		t.Fatal(err)
	}
	// Every recorded minute, and the current one once the site's own
	// sampler read the room.
	if len(pts) < minutes || len(pts) > minutes+1 || pts[0].T != start.UnixMilli() || pts[minutes/2].Waiting != 300 || pts[0].Waiting != 100 {
		t.Fatalf("%d points, first %+v", len(pts), pts[0])
	}
	if r := pts[1].AdmittedPerS; r == nil || *r != 40.0/60 {
		t.Errorf("admitted per second in minute 1: %v, want 40/60", r)
	}
	if from := doc.Find(`#charts-heading time`).First().AttrOr("datetime", ""); from != start.Format(time.RFC3339) {
		t.Errorf("range starts %q, want %s", from, start.Format(time.RFC3339))
	}

	// A range by from/to, and a bad one named.
	q := "?from=" + start.Add(10*time.Minute).Format(time.RFC3339) + "&to=" + start.Add(20*time.Minute).Format(time.RFC3339)
	doc = pageDoc("/admin/rooms/drop" + q)
	if err := json.Unmarshal([]byte(doc.Find("#admin-series").Text()), &pts); err != nil || len(pts) != 10 {
		t.Fatalf("ten minutes: %d points (%v)", len(pts), err)
	}
	if p := b.get("/admin/rooms/drop?from=soon"); p.status != http.StatusBadRequest {
		t.Errorf("from=soon: %d", p.status)
	}

	// The printable report sums it up.
	doc = pageDoc("/admin/rooms/drop/report")
	figure := func(id string) string { return strings.TrimSpace(doc.Find(`[data-testid="report-` + id + `"]`).Text()) }
	// 39 minutes of 40 admissions between readings; the last reading's
	// counts run to the live figures, which the fresh room does not have.
	// The median wait is 29 s exactly; its bucket ends at 31 s.
	if figure("admitted") != "1560" || figure("peak-line") != "300" || figure("arrivals") != "1950" || figure("wait-p50") != "31.0 s" {
		t.Errorf("report: admitted %q, peak %q, arrivals %q, p50 %q", figure("admitted"), figure("peak-line"), figure("arrivals"), figure("wait-p50"))
	}
	csvLink := doc.Find(`[data-testid="report-csv"]`).AttrOr("href", "")
	p := b.get(csvLink)
	recs, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
	if err != nil || p.status != 200 || len(recs) < minutes+1 || recs[2][5] != "40" {
		t.Fatalf("CSV %s: %d %d lines, %v", csvLink, p.status, len(recs), err)
	}
}

func TestRoomWithoutCheckoutWarns(t *testing.T) {
	site := newSite(t, siteOptions{})
	site.putRoom("bare", queue.DefaultSettings())
	shop := queue.DefaultSettings()
	shop.TargetURL = "https://shop.example/checkout"
	site.putRoom("shop", shop)
	b := site.browser()
	b.signIn()
	p := b.get("/admin/rooms/bare")
	w := p.doc.Find(`[data-testid="no-checkout-warning"]`)
	if w.Length() != 1 || w.Find("a").AttrOr("href", "") != "/admin/rooms/bare/edit#field-target_url" {
		t.Fatalf("no warning with the fix on a room without checkout: %s", p.body)
	}
	if p := b.get("/admin/rooms/shop"); p.doc.Find(`[data-testid="no-checkout-warning"]`).Length() != 0 {
		t.Error("a room with a checkout is warned about")
	}
}

// "Waiting" counts the pre-queue of a scheduled opening, which it names.
func TestWaitingCountsThePreQueue(t *testing.T) {
	site := newSite(t, siteOptions{})
	s := queue.DefaultSettings()
	opens := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	s.OpensAt = &opens
	site.putRoom("drop", s)
	for _, who := range []string{"v:a", "v:b", "v:c"} {
		if tk, _, err := site.line.Enter(context.Background(), "drop", who); err != nil || tk.State != vocab.StateScheduled {
			t.Fatalf("enter %s: %+v %v", who, tk, err)
		}
	}
	b := site.browser()
	b.signIn()
	want := strings.ReplaceAll(templates.T(templates.English, "admin.stat.pre_queue"), "{n}", "3")
	// Pages show the sampler's latest round, which may predate the
	// entries: look until one after them (rounds every 200 ms).
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		p := b.get("/admin/rooms/drop")
		if byTestID(t, p, "stat-waiting") == "3" && byTestID(t, p, "stat-pre-queue") == want && shown(p, "stat-pre-queue") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("room page: waiting %q, %q", byTestID(t, p, "stat-waiting"), byTestID(t, p, "stat-pre-queue"))
		}
	}
	var p page
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		p = b.get("/admin")
		got := strings.TrimSpace(p.doc.Find(`[data-room="drop"] [data-field="waiting"]`).Text())
		if got == "3" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rooms list: waiting %q, want 3", got)
		}
	}
}
