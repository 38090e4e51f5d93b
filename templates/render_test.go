package templates

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
	"golang.org/x/net/html"
)

// render renders c and parses it as a browser without script would, so the
// <meta> inside <noscript> is an element the tests can find.
func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	node, err := html.ParseWithOptions(&buf, html.ParseOptionEnableScripting(false))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return goquery.NewDocumentFromNode(node)
}

func byTestID(doc *goquery.Document, id string) *goquery.Selection {
	return doc.Find(`[data-testid="` + id + `"]`)
}

// text is an element's text with whitespace collapsed; it fails the test
// when there is not exactly one such element.
func text(t *testing.T, doc *goquery.Document, id string) string {
	t.Helper()
	s := byTestID(doc, id)
	if s.Length() != 1 {
		t.Fatalf("want one [data-testid=%q], found %d", id, s.Length())
	}
	return strings.Join(strings.Fields(s.Text()), " ")
}

// visible reports whether the element and all its ancestors lack hidden.
func visible(t *testing.T, doc *goquery.Document, id string) bool {
	t.Helper()
	s := byTestID(doc, id)
	if s.Length() != 1 {
		t.Fatalf("want one [data-testid=%q], found %d", id, s.Length())
	}
	_, hidden := s.Attr("hidden")
	return !hidden && s.ParentsFiltered("[hidden]").Length() == 0
}

// refresh returns the meta refresh content and whether it sits in <noscript>.
func refresh(doc *goquery.Document) (content string, noscript, ok bool) {
	m := doc.Find(`meta[http-equiv="refresh"]`)
	if m.Length() == 0 {
		return "", false, false
	}
	content, _ = m.Attr("content")
	return content, m.ParentsFiltered("noscript").Length() > 0, true
}
