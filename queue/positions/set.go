// Package positions keeps a line's waiting scores in order and answers how
// many wait ahead of a score: a waiter's position without asking the store.
package positions

import (
	"slices"
	"sort"
)

// blockMax bounds one block: an insert or removal moves at most this many
// scores, and a rank query walks blocks, not scores.
const blockMax = 512

// Set is a set of distinct scores with rank queries. Scores are kept in
// sorted blocks; a prefix count over the blocks is rebuilt once after a
// burst of changes, so a query costs two binary searches. Not safe for
// concurrent use.
type Set struct {
	blocks [][]float64 // each sorted and non-empty; every score of blocks[i] below those of blocks[i+1]
	prefix []int       // prefix[i]: scores in blocks[:i]; stale while dirty
	dirty  bool
	n      int
}

// Len is the number of scores.
func (s *Set) Len() int { return s.n }

// Reset replaces the set with scores (any order, duplicates dropped).
func (s *Set) Reset(scores []float64) {
	all := slices.Clone(scores)
	slices.Sort(all)
	all = slices.Compact(all)
	s.blocks = s.blocks[:0]
	for i := 0; i < len(all); i += blockMax / 2 {
		s.blocks = append(s.blocks, slices.Clone(all[i:min(i+blockMax/2, len(all))]))
	}
	s.n = len(all)
	s.dirty = true
}

// find is the index of the first block whose last score is >= x, or
// len(blocks) when x is above every score.
func (s *Set) find(x float64) int {
	return sort.Search(len(s.blocks), func(i int) bool {
		b := s.blocks[i]
		return b[len(b)-1] >= x
	})
}

// Has reports whether x is in the set.
func (s *Set) Has(x float64) bool {
	i := s.find(x)
	if i == len(s.blocks) {
		return false
	}
	_, ok := slices.BinarySearch(s.blocks[i], x)
	return ok
}

// Add puts x in the set; false when it was there.
func (s *Set) Add(x float64) bool {
	i := s.find(x)
	if i == len(s.blocks) {
		// Above every score: the common case (a newcomer at the back).
		if i == 0 || len(s.blocks[i-1]) >= blockMax {
			s.blocks = append(s.blocks, make([]float64, 0, blockMax))
			i = len(s.blocks)
		}
		i--
		s.blocks[i] = append(s.blocks[i], x)
	} else {
		b := s.blocks[i]
		j, ok := slices.BinarySearch(b, x)
		if ok {
			return false
		}
		s.blocks[i] = slices.Insert(b, j, x)
		if len(s.blocks[i]) > blockMax {
			b := s.blocks[i]
			half := len(b) / 2
			right := append(make([]float64, 0, blockMax), b[half:]...)
			s.blocks[i] = b[:half:half]
			s.blocks = slices.Insert(s.blocks, i+1, right)
		}
	}
	s.n++
	s.dirty = true
	return true
}

// Remove takes x out of the set; false when it was not there.
func (s *Set) Remove(x float64) bool {
	i := s.find(x)
	if i == len(s.blocks) {
		return false
	}
	j, ok := slices.BinarySearch(s.blocks[i], x)
	if !ok {
		return false
	}
	s.blocks[i] = slices.Delete(s.blocks[i], j, j+1)
	if len(s.blocks[i]) == 0 {
		s.blocks = slices.Delete(s.blocks, i, i+1)
	}
	s.n--
	s.dirty = true
	return true
}

// Below is the number of scores below x: a waiter's position is Below(its score)+1.
func (s *Set) Below(x float64) int {
	if s.dirty {
		s.prefix = s.prefix[:0]
		sum := 0
		for _, b := range s.blocks {
			s.prefix = append(s.prefix, sum)
			sum += len(b)
		}
		s.dirty = false
	}
	i := s.find(x)
	if i == len(s.blocks) {
		return s.n
	}
	j, _ := slices.BinarySearch(s.blocks[i], x)
	return s.prefix[i] + j
}
