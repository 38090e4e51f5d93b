package shop

import (
	"net/http"

	"github.com/a-h/templ"

	"github.com/waitroom/waitroom/gate/middleware"
	"github.com/waitroom/waitroom/templates"
)

// tokenCookie keeps the entry token after the redirect strips it from the URL.
const tokenCookie = "shop_token"

// Handler serves GET /shop and POST /shop/complete.
func (s *Shop) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(Paths[0].Method+" "+Paths[0].Path, s.checkout)
	mux.HandleFunc(Paths[1].Method+" "+Paths[1].Path, s.complete)
	return mux
}

// Path is one path Handler serves, for the host that mounts it to list
// (cmd/waitroom's route table, and so docs/api.md).
type Path struct{ Method, Path, Purpose string }

// Paths are Handler's: the checkout page and its buy button.
var Paths = []Path{
	{http.MethodGet, "/shop", "demo shop: the checkout"},
	{http.MethodPost, "/shop/complete", "demo shop: buy"},
}

func (s *Shop) waitURL() string { return "/rooms/" + s.cfg.Room }

func (s *Shop) render(w http.ResponseWriter, r *http.Request, status int, p pageProps) {
	p.Lang = templates.Negotiate(r.Header.Get("Accept-Language"), r.URL.Query().Get("lang"))
	p.Room, p.WaitURL = s.cfg.Room, s.waitURL()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Vary", "Accept-Language")
	templ.Handler(page(p), templ.WithStatus(status)).ServeHTTP(w, r)
}

// checkout: GET /shop[?wr_code=…|?wr_token=…]. A hand-off code arrives once
// in the URL and is redeemed server to server for the token (a room with
// waitroom's --token-in-url sends the token itself); the token is moved into
// a cookie and the URL cleaned, so it does not linger in history.
func (s *Shop) checkout(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("wr_token")
	if code := r.URL.Query().Get("wr_code"); code != "" {
		var err error
		if tok, err = s.verifier.Redeem(r.Context(), code); err != nil {
			s.cfg.Logger.Warn("shop: checkout: redeem", "err", err)
		}
		if tok == "" { // spent (the back button) or the turn is over: the cookie decides
			http.Redirect(w, r, "/shop", http.StatusSeeOther)
			return
		}
	}
	if tok != "" {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: tok, Path: "/shop", HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: 3600})
		http.Redirect(w, r, "/shop", http.StatusSeeOther)
		return
	}
	tok = cookie(r)
	if tok == "" {
		s.render(w, r, http.StatusForbidden, pageProps{Status: "need_ticket"})
		return
	}
	if _, ok := s.verify(w, r, tok); !ok {
		return
	}
	p, err := s.store.Product(r.Context(), DropID)
	if err != nil {
		s.cfg.Logger.Error("shop: checkout: read stock", "err", err)
		s.render(w, r, http.StatusServiceUnavailable, pageProps{Status: "error", Detail: "error.stock"})
		return
	}
	if p.Stock <= 0 {
		s.render(w, r, http.StatusOK, pageProps{Status: "sold_out"})
		return
	}
	s.render(w, r, http.StatusOK, pageProps{Status: "checkout", Stock: int64(p.Stock)})
}

// verify checks tok through the gate middleware's verifier and answers a
// refusal itself; ok says the token is good and the turn has started.
func (s *Shop) verify(w http.ResponseWriter, r *http.Request, tok string) (middleware.Verdict, bool) {
	v, err := s.verifier.Verify(tok)
	if err != nil {
		s.cfg.Logger.Warn("shop: checkout: verify", "err", err)
		s.render(w, r, http.StatusServiceUnavailable, pageProps{Status: "error", Detail: "error.order"})
		return v, false
	}
	if !v.Valid {
		s.refuse(w, r, v)
		return v, false
	}
	return v, true
}

// refuse answers a token that does not open checkout: too early counts down
// to its turn; any other refusal says why in the shopper's words.
func (s *Shop) refuse(w http.ResponseWriter, r *http.Request, v middleware.Verdict) {
	if v.Reason == "not_yet_valid" {
		wait := int64(v.NotBefore.Sub(s.cfg.Now()).Seconds()) + 1
		s.render(w, r, http.StatusTooEarly, pageProps{Status: "too_early", WaitS: wait})
		return
	}
	s.cfg.Logger.Info("shop: checkout: token refused", "reason", v.Reason)
	s.render(w, r, http.StatusForbidden, pageProps{Status: "refused", Reason: v.Reason})
}

// complete: POST /shop/complete places the order under the token's jti, so a
// repeated submit cannot buy twice, then frees the slot, sold out or not.
func (s *Shop) complete(w http.ResponseWriter, r *http.Request) {
	tok := cookie(r)
	if tok == "" {
		s.render(w, r, http.StatusForbidden, pageProps{Status: "need_ticket"})
		return
	}
	claims, ok := s.verify(w, r, tok)
	if !ok {
		return
	}
	if claims.Intent != "" {
		// The holder's intent from degraded mode is their order (it came,
		// or comes, through Kafka): one order per visitor.
		s.cfg.Logger.Info("shop: checkout: refused a second order", "ticket", claims.Ticket, "intent", claims.Intent)
		s.render(w, r, http.StatusConflict, pageProps{Status: "refused", Reason: "ordered"})
		return
	}
	out, err := s.store.PlaceOrder(r.Context(), claims.Ticket, DropID, 1, SourceCheckout)
	if err != nil {
		// The token and the slot stay: trying again is safe.
		s.cfg.Logger.Error("shop: checkout: place order", "ticket", claims.Ticket, "err", err)
		s.render(w, r, http.StatusServiceUnavailable, pageProps{Status: "error", Detail: "error.order"})
		return
	}
	note := ""
	if err := s.freeSlot(r.Context(), tok); err != nil {
		// The order stands; the slot frees itself when the token expires.
		s.cfg.Logger.Warn("shop: checkout: slot not handed back", "ticket", claims.Ticket, "err", err)
		note = "note.slot_later"
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: "/shop", MaxAge: -1})
	s.cfg.Logger.Info("shop: checkout order", "ticket", claims.Ticket, "status", out.Status, "replayed", out.Replayed)
	if out.Status == StatusSoldOut {
		if note == "" {
			note = "placed.usual"
		}
		s.render(w, r, http.StatusConflict, pageProps{Status: "sold_out", Detail: note})
		return
	}
	s.render(w, r, http.StatusOK, pageProps{Status: "placed", Detail: note})
}

func cookie(r *http.Request) string {
	c, err := r.Cookie(tokenCookie)
	if err != nil {
		return ""
	}
	return c.Value
}
