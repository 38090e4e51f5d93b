package gate

import (
	"fmt"
	"strings"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
)

// PathList is a flag.Value for path patterns given as a comma-separated
// list, a repeated flag, or both (--protect /checkout/*,/api/orders). Each
// Set adds its patterns, checked at once so a typo fails at start. The
// first Set after Seal replaces what came before: seal after applying the
// environment twin, and patterns on the command line win over it, as
// other flags do.
type PathList struct {
	paths  []string
	sealed bool
}

// Set adds the comma-separated patterns of v.
func (l *PathList) Set(v string) error {
	var add []string
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			add = append(add, p)
		}
	}
	if _, err := gatekit.ParsePatterns(add); err != nil {
		return fmt.Errorf("gate: path list: %w", err)
	}
	if l.sealed {
		l.paths, l.sealed = nil, false
	}
	l.paths = append(l.paths, add...)
	return nil
}

// Seal makes the next Set start a new list.
func (l *PathList) Seal() { l.sealed = true }

// Paths are the patterns, in the order given.
func (l *PathList) Paths() []string { return append([]string(nil), l.paths...) }

func (l *PathList) String() string { return strings.Join(l.paths, ",") }
