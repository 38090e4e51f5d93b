package templates

import (
	"context"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/waitroom/waitroom/queue"
)

// DefaultAccent is the accent when a room sets none (or an invalid one).
const DefaultAccent = "#1d4ed8"

// accent returns the theme colour as #rrggbb. Only hex is accepted: it goes
// into a <style> element, so nothing else may pass.
func accent(t Theme) string {
	c := strings.TrimSpace(t.Color)
	if !queue.ValidThemeColor(c) {
		return DefaultAccent
	}
	c = strings.ToLower(c)
	if len(c) == 4 {
		c = "#" + strings.Repeat(c[1:2], 2) + strings.Repeat(c[2:3], 2) + strings.Repeat(c[3:4], 2)
	}
	return c
}

// accentInk is black or white, whichever contrasts more with the accent:
// one of them always reaches WCAG AA (4.5:1) for text on the accent.
func accentInk(hex string) string {
	l := luminance(hex)
	if (l+0.05)/0.05 > 1.05/(l+0.05) {
		return "#000000"
	}
	return "#ffffff"
}

// luminance is the WCAG relative luminance of a #rrggbb colour.
func luminance(hex string) float64 {
	ch := func(i int) float64 {
		v, _ := strconv.ParseUint(hex[i:i+2], 16, 8)
		c := float64(v) / 255
		if c <= 0.04045 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(1) + 0.7152*ch(3) + 0.0722*ch(5)
}

// themeStyle sets --accent and --accent-ink for the stylesheet. It carries
// the CSP nonce from the context (templ.WithNonce), like templ's scripts.
func themeStyle(t Theme) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		a := accent(t)
		open := "<style>"
		if nonce := templ.GetNonce(ctx); nonce != "" {
			open = `<style nonce="` + templ.EscapeString(nonce) + `">`
		}
		_, err := io.WriteString(w, open+":root{--accent:"+a+";--accent-ink:"+accentInk(a)+"}</style>")
		return err
	})
}
