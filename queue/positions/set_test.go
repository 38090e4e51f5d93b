package positions

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// naive is the model: a sorted slice.
type naive []float64

func (m *naive) add(x float64) bool {
	i, ok := slices.BinarySearch(*m, x)
	if ok {
		return false
	}
	*m = slices.Insert(*m, i, x)
	return true
}

func (m *naive) remove(x float64) bool {
	i, ok := slices.BinarySearch(*m, x)
	if !ok {
		return false
	}
	*m = slices.Delete(*m, i, i+1)
	return true
}

func (m naive) below(x float64) int {
	i, _ := slices.BinarySearch(m, x)
	return i
}

// check compares every query of s with the model m, at every score and
// between them.
func check(t *testing.T, s *Set, m naive) {
	t.Helper()
	if s.Len() != len(m) {
		t.Fatalf("Len = %d, model %d", s.Len(), len(m))
	}
	for i, x := range m {
		if got := s.Below(x); got != i {
			t.Fatalf("Below(%v) = %d, model %d", x, got, i)
		}
		if !s.Has(x) {
			t.Fatalf("Has(%v) = false", x)
		}
		if s.Has(x + 0.5) {
			t.Fatalf("Has(%v) = true", x+0.5)
		}
		if got := s.Below(x + 0.5); got != i+1 {
			t.Fatalf("Below(%v) = %d, model %d", x+0.5, got, i+1)
		}
	}
}

// run applies ops decoded from data to a Set and the model and compares them.
func run(t *testing.T, data []byte, span int) {
	var s Set
	var m naive
	for i := 0; i+2 < len(data); i += 3 {
		x := float64(int(data[i+1])<<8|int(data[i+2])) - float64(span/2)
		x = float64(int(x) % span)
		switch data[i] % 4 {
		case 0, 1:
			if a, b := s.Add(x), m.add(x); a != b {
				t.Fatalf("Add(%v) = %v, model %v", x, a, b)
			}
		case 2:
			if a, b := s.Remove(x), m.remove(x); a != b {
				t.Fatalf("Remove(%v) = %v, model %v", x, a, b)
			}
		case 3:
			if got, want := s.Below(x), m.below(x); got != want {
				t.Fatalf("Below(%v) = %d, model %d", x, got, want)
			}
		}
	}
	check(t, &s, m)
}

func FuzzSetMatchesModel(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 2, 2, 0, 1, 3, 0, 2})
	f.Add(make([]byte, 3000))
	f.Fuzz(func(t *testing.T, data []byte) { run(t, data, 5000) })
}

// TestSetRandomAgainstModel: enough ops to split and drop many blocks.
func TestSetRandomAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, span := range []int{50, 3000, 1 << 16} {
		data := make([]byte, 60000)
		for i := range data {
			data[i] = byte(r.UintN(256))
		}
		run(t, data, span)
	}
}

// TestSetLineShape: the line's usual traffic, newcomers at the back and
// admissions at the head, plus a draw's places below the head.
func TestSetLineShape(t *testing.T) {
	var s Set
	var m naive
	next := 1.0
	for round := range 200 {
		for range 100 {
			s.Add(next)
			m.add(next)
			next++
		}
		for range 60 {
			if len(m) == 0 {
				break
			}
			head := m[0]
			if !s.Remove(head) || !m.remove(head) {
				t.Fatalf("round %d: head %v not removed", round, head)
			}
		}
		if round == 100 {
			low := m[0]
			for k := range 700 {
				x := low - 701 + float64(k)
				s.Add(x)
				m.add(x)
			}
		}
	}
	check(t, &s, m)
}

func TestSetReset(t *testing.T) {
	var s Set
	s.Add(99)
	in := []float64{5, 3, 3, 9, -2}
	for i := range 2000 {
		in = append(in, float64(1000+i))
	}
	s.Reset(in)
	var m naive
	for _, x := range in {
		m.add(x)
	}
	check(t, &s, m)
	s.Add(4)
	m.add(4)
	s.Remove(1500)
	m.remove(1500)
	check(t, &s, m)
}

func BenchmarkSetLine100k(b *testing.B) {
	var s Set
	for i := range 100_000 {
		s.Add(float64(i))
	}
	b.ResetTimer()
	next := 100_000.0
	for i := 0; i < b.N; i++ {
		s.Add(next)
		s.Remove(next - 100_000)
		next++
		_ = s.Below(next - 50_000)
	}
}
