// Package shop is the demo checkout: what a shop's own checkout does with
// waitroom. It verifies the entry token offline through the JWKS, shows
// checkout, and on "Place order" tells waitroom the slot is free.
package shop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/a-h/templ"
	"github.com/golang-jwt/jwt/v5"

	"github.com/waitroom/waitroom/templates"
)

// tokenCookie keeps the entry token after the redirect strips it from the URL.
const tokenCookie = "shop_token"

// Config says where the waiting room is and which room protects this shop.
type Config struct {
	WaitroomURL string // e.g. http://127.0.0.1:8080
	Room        string
	Client      *http.Client
	Logger      *slog.Logger
	Now         func() time.Time
}

// Shop serves /shop and /shop/complete.
type Shop struct {
	cfg Config
	ctx context.Context

	mu   sync.Mutex
	keys keyfunc.Keyfunc
}

// New returns the shop; its JWKS cache starts on first use (the waiting room
// may not be listening yet) and refreshes in the background until ctx ends.
func New(ctx context.Context, cfg Config) *Shop {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Shop{cfg: cfg, ctx: ctx}
}

func (s *Shop) keyfunc() (keyfunc.Keyfunc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys != nil {
		return s.keys, nil
	}
	log := s.cfg.Logger
	k, err := keyfunc.NewDefaultOverrideCtx(s.ctx, []string{s.cfg.WaitroomURL + "/.well-known/jwks.json"}, keyfunc.Override{
		Client: s.cfg.Client, HTTPTimeout: 5 * time.Second, RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) { log.Warn("shop: refresh jwks", "url", u, "err", err) }
		},
	})
	if err != nil {
		return nil, fmt.Errorf("shop: jwks: %w", err)
	}
	s.keys = k
	return k, nil
}

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
	p.Product, p.Price = "Limited sneaker drop", "₩129,000"
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
	s.render(w, r, http.StatusOK, templates.ShopProps{Status: "checkout"})
}

// verify checks the entry token offline: signature through the JWKS, the room
// as audience, and the times, so the jitter holds.
func (s *Shop) verify(tok string) (*jwt.RegisteredClaims, error) {
	keys, err := s.keyfunc()
	if err != nil {
		return nil, err
	}
	claims := &jwt.RegisteredClaims{}
	_, err = jwt.ParseWithClaims(tok, claims, keys.Keyfunc,
		jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithAudience(s.cfg.Room),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(s.cfg.Now))
	return claims, err
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

// complete: POST /shop/complete places the order, then frees the slot.
func (s *Shop) complete(w http.ResponseWriter, r *http.Request) {
	tok := cookie(r)
	if _, err := s.verify(tok); tok == "" || err != nil {
		if err == nil {
			err = errors.New("no entry token")
		}
		s.refuse(w, r, err)
		return
	}
	body, _ := json.Marshal(map[string]string{"token": tok})
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost,
		s.cfg.WaitroomURL+"/api/rooms/"+s.cfg.Room+"/complete", bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		var res *http.Response
		if res, err = s.cfg.Client.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				err = fmt.Errorf("waitroom answered %s", res.Status)
			}
		}
	}
	if err != nil {
		s.render(w, r, http.StatusConflict, templates.ShopProps{Status: "refused", Detail: "The order could not be completed: " + err.Error()})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: "/shop", MaxAge: -1})
	s.render(w, r, http.StatusOK, templates.ShopProps{Status: "placed"})
}

func cookie(r *http.Request) string {
	c, err := r.Cookie(tokenCookie)
	if err != nil {
		return ""
	}
	return c.Value
}
