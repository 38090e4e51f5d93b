package dashboard_test

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// settingPaths are the JSON paths of every field of queue.Settings and of
// its nested groups ("adaptive.open_at"), found by reflection.
func settingPaths(t *testing.T) map[string][]int {
	t.Helper()
	paths := map[string][]int{}
	var walk func(prefix string, index []int, typ reflect.Type)
	walk = func(prefix string, index []int, typ reflect.Type) {
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			idx := append(append([]int{}, index...), i)
			ft := typ.Field(i).Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]() && ft != reflect.TypeFor[queue.LocalText]() {
				walk(prefix+name+".", idx, ft)
				continue
			}
			paths[prefix+name] = idx
		}
	}
	walk("", nil, reflect.TypeFor[queue.Settings]())
	return paths
}

// field is the value at a reflection path, through pointers (nil: invalid).
func field(s *queue.Settings, index []int) reflect.Value {
	v := reflect.ValueOf(s).Elem()
	for _, i := range index {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v
}

// formOf is what a browser submits for the page's room form, as it stands.
func formOf(t *testing.T, p page) url.Values {
	t.Helper()
	form := url.Values{}
	p.doc.Find("form[data-room-form]").Find("input, select, textarea").Each(func(_ int, el *goquery.Selection) {
		name, _ := el.Attr("name")
		if name == "" || el.Closest("template").Length() > 0 {
			return
		}
		switch goquery.NodeName(el) {
		case "select":
			opt := el.Find("option[selected]")
			if opt.Length() == 0 {
				opt = el.Find("option").First()
			}
			v, _ := opt.Attr("value")
			form.Add(name, v)
		case "textarea":
			form.Add(name, el.Text())
		default:
			typ, _ := el.Attr("type")
			if _, checked := el.Attr("checked"); typ == "checkbox" && !checked {
				return
			}
			v, _ := el.Attr("value")
			form.Add(name, v)
		}
	})
	return form
}

// TestEditKeepsEverySetting: a room whose every setting differs from the
// default is edited through the dashboard form unchanged, and every setting
// reads back the same. The settings are walked by reflection, so a new
// field of queue.Settings fails here until it has a sample below and the
// form carries it (through its queue.SettingFields declaration).
func TestEditKeepsEverySetting(t *testing.T) {
	tier := func(n int64) *int64 { return &n }
	ends := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	samples := map[string]func(s *queue.Settings){
		"capacity":          func(s *queue.Settings) { s.Capacity = 250 },
		"batch_size":        func(s *queue.Settings) { s.BatchSize = 7 },
		"batch_interval_ms": func(s *queue.Settings) { s.BatchIntervalMS = 500 },
		"jitter_ms":         func(s *queue.Settings) { s.JitterMS = 0 },
		"session_ttl_s":     func(s *queue.Settings) { s.SessionTTLS = 600 },
		"abandon_after_s":   func(s *queue.Settings) { s.AbandonAfterS = 90 },
		"arrival_window_s":  func(s *queue.Settings) { s.ArrivalWindowS = 0 },
		"idle_after_s":      func(s *queue.Settings) { s.IdleAfterS = 120 },
		"tiers": func(s *queue.Settings) {
			s.Tiers = []queue.Tier{{MaxPosition: tier(50), IntervalMS: 1000}, {MaxPosition: nil, IntervalMS: 3000}}
		},
		"target_url":            func(s *queue.Settings) { s.TargetURL = "https://shop.example/checkout?from=line" },
		"activation":            func(s *queue.Settings) { s.Activation = queue.ActivationAdaptive },
		"paused":                func(s *queue.Settings) { s.Paused = true },
		"ends_at":               func(s *queue.Settings) { s.EndsAt = &ends },
		"opens_at":              func(s *queue.Settings) { opens := ends.Add(-time.Hour); s.OpensAt = &opens },
		"title":                 func(s *queue.Settings) { s.Title = queue.Text("Spring <drop> & more") },
		"message":               func(s *queue.Settings) { s.Message = queue.Text("Two lines,\nkept as typed ") },
		"user_secret":           func(s *queue.Settings) { s.UserSecret = "0123456789abcdef-secret" },
		"theme_color":           func(s *queue.Settings) { s.ThemeColor = "#f80" },
		"logo_url":              func(s *queue.Settings) { s.LogoURL = "/static/logo.png" },
		"shop_url":              func(s *queue.Settings) { s.ShopURL = "https://shop.example/drops" },
		"checkout_after_intent": func(s *queue.Settings) { s.CheckoutAfterIntent = true },
		"product_id":            func(s *queue.Settings) { s.ProductID = "sku-1" },
		"product_name":          func(s *queue.Settings) { s.ProductName = queue.Text("Sneaker, size 42") },
		"allowed_embedders": func(s *queue.Settings) {
			s.AllowedEmbedders = []string{"https://shop.example", "http://localhost:8081"}
		},
		"max_quantity":                            func(s *queue.Settings) { s.MaxQuantity = 3 },
		"queueing_method":                         func(s *queue.Settings) { s.QueueingMethod = queue.MethodRandom },
		"sold_out":                                func(s *queue.Settings) { s.SoldOut = true },
		"sold_out_message":                        func(s *queue.Settings) { s.SoldOutMessage = queue.Text("All gone,\nthank you ") },
		"max_waiting":                             func(s *queue.Settings) { s.MaxWaiting = 5000 },
		"bot_protection.proof_of_work":            func(s *queue.Settings) { s.BotProtection.ProofOfWork = queue.ProofOfWorkOff },
		"bot_protection.pow_cost":                 func(s *queue.Settings) { s.BotProtection.PowCost = 500 },
		"bot_protection.enters_per_ip_per_minute": func(s *queue.Settings) { s.BotProtection.EntersPerIPPerMinute = 30 },
		"bot_protection.places_per_ip":            func(s *queue.Settings) { s.BotProtection.PlacesPerIP = 2 },
		"bot_protection.unarrived_per_network":    func(s *queue.Settings) { s.BotProtection.UnarrivedPerNetwork = 9 },
		"adaptive.signal":                         func(s *queue.Settings) { s.Adaptive.Signal = queue.SignalPrometheus },
		"adaptive.prometheus_url":                 func(s *queue.Settings) { s.Adaptive.PrometheusURL = "http://prom.example:9090" },
		"adaptive.query":                          func(s *queue.Settings) { s.Adaptive.Query = `avg(rate(cpu{job="checkout"}[1m]))` },
		"adaptive.latency_target_ms":              func(s *queue.Settings) { s.Adaptive.LatencyTargetMS = 250 },
		"adaptive.open_at":                        func(s *queue.Settings) { s.Adaptive.OpenAt = 0.75 },
		"adaptive.close_at":                       func(s *queue.Settings) { s.Adaptive.CloseAt = 0.25 },
		"adaptive.window_s":                       func(s *queue.Settings) { s.Adaptive.WindowS = 30 },
		"adaptive.windows_to_close":               func(s *queue.Settings) { s.Adaptive.WindowsToClose = 5 },
	}
	paths := settingPaths(t)
	def := queue.DefaultSettings()
	def.Adaptive = &queue.Adaptive{}
	def.Normalize()
	want := queue.DefaultSettings()
	want.Adaptive = &queue.Adaptive{}
	for name := range paths {
		set, ok := samples[name]
		if !ok {
			t.Errorf("queue.Settings.%s has no sample here: add one (and declare it in queue.SettingFields)", name)
			continue
		}
		set(&want)
	}
	for name := range samples {
		if _, ok := paths[name]; !ok {
			t.Errorf("sample %s is no field of queue.Settings", name)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if err := want.Validate(); err != nil {
		t.Fatalf("the samples do not validate: %v", err)
	}
	for name, idx := range paths {
		if reflect.DeepEqual(field(&def, idx).Interface(), field(&want, idx).Interface()) {
			t.Errorf("sample %s is the default: it would not catch a dropped field", name)
		}
	}

	site := newSite(t, siteOptions{})
	site.putRoom("every", want)
	b := site.browser()
	b.signIn()
	p := b.get("/admin/rooms/every/edit")
	if p.status != http.StatusOK {
		t.Fatalf("edit page: %d", p.status)
	}
	form := formOf(t, p)
	if p := b.postForm("/admin/rooms/every/edit", form); p.status != http.StatusSeeOther {
		t.Fatalf("edit unchanged: %d %v\n%.2000s", p.status, form, p.body)
	}
	got := site.getRoom("every")
	for name, idx := range paths {
		g, w := field(&got, idx), field(&want, idx)
		if !g.IsValid() || !reflect.DeepEqual(g.Interface(), w.Interface()) {
			t.Errorf("%s: the dashboard's edit turned %v into %v", name, w, g)
		}
	}
}

// TestFormSetsEachSettingAlone: each declared input, typed alone into the
// create form, reaches the stored settings.
func TestFormSetsEachSettingAlone(t *testing.T) {
	site := newSite(t, siteOptions{})
	b := site.browser()
	b.signIn()
	for i, c := range []struct {
		form  url.Values
		check func(s queue.Settings) bool
	}{
		{url.Values{"ends_at": {"2031-02-03T04:05"}}, func(s queue.Settings) bool {
			return s.EndsAt != nil && s.EndsAt.Equal(time.Date(2031, 2, 3, 4, 5, 0, 0, time.UTC))
		}},
		{url.Values{"opens_at": {"2031-02-03T09:00"}}, func(s queue.Settings) bool {
			return s.OpensAt != nil && s.OpensAt.Equal(time.Date(2031, 2, 3, 9, 0, 0, 0, time.UTC))
		}},
		{url.Values{"tiers.max_position": {"10", "", ""}, "tiers.interval_ms": {"500", "2000", ""}}, func(s queue.Settings) bool {
			return len(s.Tiers) == 2 && *s.Tiers[0].MaxPosition == 10 && s.Tiers[0].IntervalMS == 500 && s.Tiers[1].MaxPosition == nil && s.Tiers[1].IntervalMS == 2000
		}},
		{url.Values{"activation": {"adaptive"}, "adaptive.signal": {"gate_inflight"}, "adaptive.open_at": {"0.9"}, "adaptive.close_at": {"0.4"}}, func(s queue.Settings) bool {
			return s.Adaptive != nil && s.Adaptive.Signal == queue.SignalGateInflight && s.Adaptive.OpenAt == 0.9 && s.Adaptive.CloseAt == 0.4 && s.Adaptive.WindowS == 60
		}},
		{url.Values{"bot_protection.proof_of_work": {"off"}, "bot_protection.places_per_ip": {"3"}}, func(s queue.Settings) bool {
			return !s.BotProtection.PowOn() && s.BotProtection.PlacesPerIP == 3 && s.BotProtection.PowCost == queue.DefaultPowCost
		}},
	} {
		room := "one-" + string(rune('a'+i))
		c.form.Set("room", room)
		if p := b.postForm("/admin/create", c.form); p.status != http.StatusSeeOther {
			t.Errorf("%v: %d %.1000s", c.form, p.status, p.body)
			continue
		}
		if s := site.getRoom(room); !c.check(s) {
			t.Errorf("%v stored %+v", c.form, s)
		}
	}
}

// TestFormNamesTheBadMemberInput: a bad member of a group is marked at its
// own input with the API's words, a bad tier at the tier rows, a date that
// is no date at the date.
func TestFormNamesTheBadMemberInput(t *testing.T) {
	site := newSite(t, siteOptions{})
	b := site.browser()
	b.signIn()
	p := b.postForm("/admin/create", url.Values{"room": {"bad-members"}, "activation": {"adaptive"},
		"adaptive.signal": {"gate_inflight"}, "adaptive.open_at": {"0.5"}, "adaptive.close_at": {"0.7"},
		"bot_protection.pow_cost": {"0x10"}, "tiers.max_position": {"5", "3", ""}, "tiers.interval_ms": {"500", "500", "500"},
		"ends_at": {"next friday"}})
	if p.status != http.StatusBadRequest {
		t.Fatalf("bad members: %d", p.status)
	}
	for name, want := range map[string]string{
		"adaptive.close_at":       saidIn(t, templates.English, `{"activation": "adaptive", "adaptive": {"signal": "gate_inflight", "open_at": 0.5, "close_at": 0.7}}`),
		"bot_protection.pow_cost": saidIn(t, templates.English, `{"bot_protection": {"pow_cost": "0x10"}}`),
		"tiers":                   saidIn(t, templates.English, `{"tiers": [{"max_position": 5, "interval_ms": 500}, {"max_position": 3, "interval_ms": 500}, {"max_position": null, "interval_ms": 500}]}`),
		"ends_at":                 templates.T(templates.English, "admin.rule.datetime"),
	} {
		if got := byTestID(t, p, "error-"+name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if v := attr(t, p, `[data-testid="field-adaptive.close_at"]`, "value"); v != "0.7" {
		t.Errorf("close_at not kept as typed: %q", v)
	}
	if n := p.doc.Find(`[data-tier-rows] [data-testid="tier-row"]`).Length(); n != 3 {
		t.Errorf("tier rows kept: %d, want 3", n)
	}
}
