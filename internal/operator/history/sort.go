package history

import "slices"

func sortMinutes(ms []Minute) {
	slices.SortFunc(ms, func(a, b Minute) int { return a.At.Compare(b.At) })
}
