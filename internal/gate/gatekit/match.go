package gatekit

import (
	"fmt"
	"path"
	"strings"
)

// Patterns say which paths a gate protects. A pattern is a path.Match
// pattern; one ending in "/*" also matches everything below it and the
// directory itself ("/checkout/*" matches "/checkout" and "/checkout/a/b").
type Patterns struct{ list []pattern }

// pattern keeps its literal head, what comes before its first wildcard: a
// path that does not start with it cannot match, so a long list (waitroom's
// own paths in gate.Split) is mostly passed over with one comparison each.
type pattern struct{ pat, head string }

func newPattern(pat string) pattern {
	base, _ := strings.CutSuffix(pat, "/*") // "/checkout/*" also matches "/checkout"
	if i := strings.IndexAny(base, `*?[\`); i >= 0 {
		base = base[:i]
	}
	return pattern{pat: pat, head: base}
}

// ParsePatterns checks patterns; each must be an absolute path.
func ParsePatterns(list []string) (*Patterns, error) {
	p := &Patterns{}
	for _, raw := range list {
		pat := strings.TrimSpace(raw)
		if pat == "" {
			continue
		}
		if !strings.HasPrefix(pat, "/") {
			return nil, fmt.Errorf("pattern %q: must start with /", raw)
		}
		if _, err := path.Match(pat, "/"); err != nil {
			return nil, fmt.Errorf("pattern %q: %w", raw, err)
		}
		p.list = append(p.list, newPattern(pat))
	}
	return p, nil
}

// Empty reports whether there is no pattern.
func (p *Patterns) Empty() bool { return p == nil || len(p.list) == 0 }

// Match reports whether urlPath (decoded, as in URL.Path) is covered. It
// also tries the path cleaned of dot segments, doubled slashes and ;params,
// because upstreams that normalise would serve a protected resource under
// those spellings: over-protecting is safe, under-protecting is a bypass.
func (p *Patterns) Match(urlPath string) bool {
	if p == nil {
		return false
	}
	for _, c := range spellings(urlPath) {
		for _, pat := range p.list {
			if strings.HasPrefix(c, pat.head) && matchOne(pat.pat, c) {
				return true
			}
		}
	}
	return false
}

func spellings(s string) []string {
	if s == "" {
		s = "/"
	}
	out := []string{s}
	if c := path.Clean("/" + s); c != s {
		out = append(out, c)
	}
	if strings.Contains(s, ";") {
		segs := strings.Split(s, "/")
		for i, seg := range segs {
			segs[i], _, _ = strings.Cut(seg, ";")
		}
		out = append(out, path.Clean("/"+strings.Join(segs, "/")))
	}
	return out
}

func matchOne(pat, s string) bool {
	base, prefix := strings.CutSuffix(pat, "/*")
	if !prefix {
		ok, _ := path.Match(pat, s)
		return ok
	}
	if base == "" {
		return true // "/*": everything
	}
	// Compare base with as many leading segments of s as base has.
	n := strings.Count(base, "/")
	head := s
	seen := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			if seen == n {
				head = s[:i]
				break
			}
			seen++
		}
	}
	ok, _ := path.Match(base, head)
	return ok
}
