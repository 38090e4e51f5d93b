package shop

import (
	"errors"
	"net/http"

	"github.com/a-h/templ"
	"github.com/golang-jwt/jwt/v5"

	"github.com/waitroom/waitroom/templates"
)

// tokenCookie keeps the entry token after the redirect strips it from the URL.
const tokenCookie = "shop_token"

// Handler serves GET /shop and POST /shop/complete.
func (s *Shop) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /shop", s.checkout)
	mux.HandleFunc("POST /shop/complete", s.complete)
	return mux
}

func (s *Shop) waitURL() string { return "/rooms/" + s.cfg.Room }

func (s *Shop) render(w http.ResponseWriter, r *http.Request, status int, p templates.ShopProps) {
	p.Title, p.Room, p.WaitURL = "Demo shop checkout", s.cfg.Room, s.waitURL()
	p.Product, p.Price = DropName, DropPrice
	w.Header().Set("Cache-Control", "no-store")
	templ.Handler(templates.ShopPage(p), templ.WithStatus(status)).ServeHTTP(w, r)
}

// checkout: GET /shop[?wr_token=…]. The token arrives once in the URL; it is
// moved into a cookie and the URL cleaned, so it does not linger in history.
func (s *Shop) checkout(w http.ResponseWriter, r *http.Request) {
	if tok := r.URL.Query().Get("wr_token"); tok != "" {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: tok, Path: "/shop", HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: 3600})
		http.Redirect(w, r, "/shop", http.StatusSeeOther)
		return
	}
	tok := cookie(r)
	if tok == "" {
		s.render(w, r, http.StatusForbidden, templates.ShopProps{Status: "need_ticket"})
		return
	}
	if _, err := s.verify(tok); err != nil {
		s.refuse(w, r, err)
		return
	}
	p, err := s.store.Product(r.Context(), DropID)
	if err != nil {
		s.cfg.Logger.Error("shop: checkout: read stock", "err", err)
		s.render(w, r, http.StatusServiceUnavailable, templates.ShopProps{Status: "error", Detail: "The shop cannot reach its stock right now. Please try again."})
		return
	}
	if p.Stock <= 0 {
		s.render(w, r, http.StatusOK, templates.ShopProps{Status: "sold_out"})
		return
	}
	s.render(w, r, http.StatusOK, templates.ShopProps{Status: "checkout", Stock: int64(p.Stock)})
}

func (s *Shop) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, jwt.ErrTokenNotValidYet) {
		claims := &jwt.RegisteredClaims{}
		if _, _, perr := jwt.NewParser().ParseUnverified(cookie(r), claims); perr == nil && claims.NotBefore != nil {
			wait := int64(claims.NotBefore.Sub(s.cfg.Now()).Seconds()) + 1
			s.render(w, r, http.StatusTooEarly, templates.ShopProps{Status: "too_early", WaitS: wait})
			return
		}
	}
	s.render(w, r, http.StatusForbidden, templates.ShopProps{Status: "refused", Detail: "Your entry token is not valid: " + err.Error()})
}

// complete: POST /shop/complete places the order under the token's jti, so a
// repeated submit cannot buy twice, then frees the slot, sold out or not.
func (s *Shop) complete(w http.ResponseWriter, r *http.Request) {
	tok := cookie(r)
	claims, err := s.verify(tok)
	if err == nil && claims.ID == "" {
		err = errors.New("no jti")
	}
	if tok == "" || err != nil {
		if err == nil {
			err = errors.New("no entry token")
		}
		s.refuse(w, r, err)
		return
	}
	out, err := s.store.PlaceOrder(r.Context(), claims.ID, DropID, 1, SourceCheckout)
	if err != nil {
		// The token and the slot stay: trying again is safe.
		s.cfg.Logger.Error("shop: checkout: place order", "ticket", claims.ID, "err", err)
		s.render(w, r, http.StatusServiceUnavailable, templates.ShopProps{Status: "error", Detail: "The order could not be placed. Please try again."})
		return
	}
	note := ""
	if err := s.freeSlot(r.Context(), tok); err != nil {
		// The order stands; the slot frees itself when the token expires.
		s.cfg.Logger.Warn("shop: checkout: slot not handed back", "ticket", claims.ID, "err", err)
		note = "Your place in checkout could not be handed back yet; it frees itself shortly."
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: "/shop", MaxAge: -1})
	s.cfg.Logger.Info("shop: checkout order", "ticket", claims.ID, "status", out.Status, "replayed", out.Replayed)
	if out.Status == StatusSoldOut {
		if note == "" {
			note = "Your place in checkout was handed back to the next shopper."
		}
		s.render(w, r, http.StatusConflict, templates.ShopProps{Status: "sold_out", Detail: note})
		return
	}
	s.render(w, r, http.StatusOK, templates.ShopProps{Status: "placed", Detail: note})
}

func cookie(r *http.Request) string {
	c, err := r.Cookie(tokenCookie)
	if err != nil {
		return ""
	}
	return c.Value
}
