package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/waitroom/waitroom/docs"
)

// The API tests send every request through checkedByOpenAPI, so that the
// description in docs/openapi.yaml cannot drift from what the handlers do:
// an answer that does not match its documented status and schema fails the
// test, and so does a request the server accepted (2xx) that the
// description says is invalid. Push streams are not checked.

var openAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(docs.OpenAPI)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	doc.Servers = nil // match any host: the test servers' are random
	return legacy.NewRouter(doc)
})

// documented are the path prefixes docs/openapi.yaml covers in full.
var documented = []string{"/api/", "/admin/api/", "/.well-known/", "/healthz", "/readyz", "/livez"}

// reporter is the part of *testing.T the check uses.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

func checkedByOpenAPI(t reporter, h http.Handler) http.Handler {
	t.Helper()
	router, err := openAPIRouter()
	if err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isDocumented(r) {
			h.ServeHTTP(w, r)
			return
		}
		reqBody, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		rec := &teeWriter{ResponseWriter: w}
		h.ServeHTTP(rec, r)

		check := r.Clone(context.WithoutCancel(r.Context()))
		check.Body = io.NopCloser(bytes.NewReader(reqBody))
		route, params, err := router.FindRoute(check)
		if err != nil {
			if !unknownEndpoint(rec) {
				t.Errorf("openapi: %s %s answered %d but is not described: %v", r.Method, r.URL.Path, rec.status(), err)
			}
			return
		}
		in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		if rec.status()/100 == 2 {
			if err := openapi3filter.ValidateRequest(check.Context(), in); err != nil {
				t.Errorf("openapi: %s %s was accepted (%d) but its request does not match the description: %v", r.Method, r.URL.Path, rec.status(), err)
			}
		}
		opts := &openapi3filter.Options{IncludeResponseStatus: true}
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			opts.ExcludeResponseBody = true
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.status(),
			Header: rec.Header(), Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())), Options: opts}
		if err := openapi3filter.ValidateResponse(check.Context(), out); err != nil {
			t.Errorf("openapi: %s %s answered %d %s, which does not match the description: %v", r.Method, r.URL.Path, rec.status(), rec.body.String(), err)
		}
	})
}

func isDocumented(r *http.Request) bool {
	p := r.URL.Path
	if r.Method == http.MethodHead || strings.HasSuffix(p, "/ws") || strings.HasSuffix(p, "/events") ||
		strings.Contains(p, "/forward-auth/") {
		return false
	}
	for _, d := range documented {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// unknownEndpoint: the server's own 404/405 for a path it does not serve.
func unknownEndpoint(rec *teeWriter) bool {
	if rec.status() != http.StatusNotFound && rec.status() != http.StatusMethodNotAllowed {
		return false
	}
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal(rec.body.Bytes(), &e)
	return e.Error.Code == "not_found" || e.Error.Code == "method_not_allowed"
}

// teeWriter keeps a copy of the answer (bounded) as it goes out.
type teeWriter struct {
	http.ResponseWriter
	code int
	body bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if w.body.Len() < 1<<20 {
		w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *teeWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// drift records what the check reports, to show that it reports.
type drift struct{ errs []string }

func (d *drift) Helper() {}
func (d *drift) Errorf(format string, args ...any) {
	d.errs = append(d.errs, fmt.Sprintf(format, args...))
}
func (d *drift) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// TestOpenAPICatchesDrift: answers that stray from docs/openapi.yaml are
// reported: a ticket without its state, an undocumented status, an
// undocumented endpoint, an accepted request the description forbids.
func TestOpenAPICatchesDrift(t *testing.T) {
	cases := []struct {
		name, method, path, body string
		status                   int
		answer                   string
	}{
		{"ticket without state", "POST", "/api/rooms/demo/enter", "", 200,
			`{"room":"demo","ticket":"t","position":1,"waiting":1,"eta_s":1,"next_update_ms":1,"token":null,"orderable_at":null,"redirect_url":null,"paused":false,"accept_url":null}`},
		{"unknown state", "GET", "/api/rooms/demo/tickets/t", "", 200,
			`{"room":"demo","ticket":"t","state":"floating","position":1,"waiting":1,"eta_s":1,"next_update_ms":1,"token":null,"orderable_at":null,"redirect_url":null,"paused":false,"accept_url":null}`},
		{"undocumented status", "POST", "/api/tokens/verify", `{"token":"x"}`, 418, `{"error":{"code":"teapot","message":"no"}}`},
		{"error without message", "POST", "/api/rooms/demo/complete", `{"token":"x"}`, 409, `{"error":{"code":"token_completed"}}`},
		{"undocumented endpoint", "GET", "/api/rooms/demo/secret", "", 200, `{}`},
		{"accepted a request the description forbids", "POST", "/api/tokens/verify", `{"room":"demo"}`, 200, `{"valid":false,"expires_at":null,"reason":"malformed"}`},
	}
	for _, c := range cases {
		d := &drift{}
		h := checkedByOpenAPI(d, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.status)
			_, _ = io.WriteString(w, c.answer)
		}))
		req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		if len(d.errs) == 0 {
			t.Errorf("%s: not reported", c.name)
		}
	}
}

func TestOpenAPIIsServed(t *testing.T) {
	e := newEnv(t)
	r := e.do(nil, "GET", "/api/openapi.yaml", "")
	if r.status != http.StatusOK || r.raw != string(docs.OpenAPI) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/yaml") {
		t.Fatalf("GET /api/openapi.yaml: %d %q, want docs/openapi.yaml as application/yaml", r.status, r.header.Get("Content-Type"))
	}
}
