package dashboard_test

import (
	"net/http"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// TestFormInputsAreStructured: the room form has an input of its own kind
// for every setting: a date picker (not free-text RFC 3339) for dates, rows
// of two numbers for the tiers and one input per member for the adaptive
// settings and bot protection (no JSON boxes), a list of choices for
// choices; a text box only for the long texts.
func TestFormInputsAreStructured(t *testing.T) {
	site := newSite(t, siteOptions{})
	b := site.browser()
	b.signIn()
	p := b.get("/admin/create")
	if p.status != http.StatusOK {
		t.Fatalf("create form: %d", p.status)
	}
	form := p.doc.Find("form[data-room-form]")
	named := func(name string) *goquery.Selection { return form.Find(`[name="` + name + `"]`).Not("template *") }
	var check func(f queue.SettingField)
	check = func(f queue.SettingField) {
		name := f.Name
		if f.PerLang {
			for _, l := range templates.Langs {
				if named(templates.AdminLangInput(f.Name, l)).Length() != 1 {
					t.Errorf("%s: no input for %s", f.Name, l)
				}
			}
			return
		}
		el := named(name)
		typ, _ := el.Attr("type")
		mode, _ := el.Attr("inputmode")
		switch f.Kind {
		case queue.KindGroup:
			if el.Length() != 0 {
				t.Errorf("%s: the group is one input (%s), want one per member", name, goquery.NodeName(el))
			}
			for _, m := range f.Fields {
				check(m)
			}
			return
		case queue.KindTiers:
			maxes, intervals := named(name+".max_position"), named(name+".interval_ms")
			if el.Length() != 0 || maxes.Length() == 0 || maxes.Length() != intervals.Length() ||
				form.Find(`template[data-tier-template]`).Length() != 1 {
				t.Errorf("tiers: %d whole inputs, %d/%d row inputs: want rows of two numbers and a row template", el.Length(), maxes.Length(), intervals.Length())
			}
			maxes.AddSelection(intervals).Each(func(_ int, s *goquery.Selection) {
				if m, _ := s.Attr("inputmode"); m != "numeric" {
					t.Errorf("tiers: a row input is inputmode %q", m)
				}
			})
			return
		}
		if el.Length() != 1 {
			t.Errorf("%s: %d inputs, want 1", name, el.Length())
			return
		}
		node := goquery.NodeName(el)
		if node == "textarea" && f.Kind != queue.KindLongText {
			t.Errorf("%s: a text box, want an input of its kind (%s)", name, f.Kind)
		}
		switch f.Kind {
		case queue.KindDateTime:
			if typ != "datetime-local" {
				t.Errorf("%s: type %q, want a date and time picker", name, typ)
			}
		case queue.KindNumber:
			if mode != "numeric" {
				t.Errorf("%s: inputmode %q", name, mode)
			}
		case queue.KindDecimal:
			if mode != "decimal" {
				t.Errorf("%s: inputmode %q", name, mode)
			}
		case queue.KindSelect:
			if node != "select" || el.Find("option").Length() != len(f.Choices) {
				t.Errorf("%s: %s with %d options, want a select of %v", name, node, el.Find("option").Length(), f.Choices)
			}
		case queue.KindBool:
			if typ != "checkbox" {
				t.Errorf("%s: type %q", name, typ)
			}
		}
	}
	for _, f := range queue.SettingFields {
		check(f)
	}
}
