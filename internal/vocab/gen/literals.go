package main

import "strings"

// literal is a string literal in a source file, at its line.
type literal struct {
	line int
	text string
}

// exempt marks a line whose literal only looks like a word of the
// vocabulary (a metric's field name, say): a comment with it lets it be.
const exempt = "vocab: not a state"

// literals are the string literals of a Lua (lua true) or TypeScript source,
// comments skipped, with the lines that carry the exempt mark left out.
func literals(src string, lua bool) []literal {
	var out []literal
	lines := strings.Split(src, "\n")
	line := 1
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			line++
		case lua && strings.HasPrefix(src[i:], "--[["):
			end := strings.Index(src[i:], "]]")
			if end < 0 {
				return out
			}
			line += strings.Count(src[i:i+end], "\n")
			i += end + 1
		case lua && strings.HasPrefix(src[i:], "--"), !lua && strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
		case !lua && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i:], "*/")
			if end < 0 {
				return out
			}
			line += strings.Count(src[i:i+end], "\n")
			i += end + 1
		case c == '\'' || c == '"' || (!lua && c == '`'):
			start, at := i+1, line
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' {
					i++
				} else if src[i] == '\n' {
					line++
				}
			}
			if !strings.Contains(lines[at-1], exempt) {
				out = append(out, literal{at, src[start:min(i, len(src))]})
			}
		}
	}
	return out
}
