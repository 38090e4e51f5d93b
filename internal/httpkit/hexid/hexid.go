// Package hexid is the one check of the 128-bit ids waitroom hands out
// (tickets, visitor cookies): 32 lower-case hex characters, one spelling.
package hexid

// Len is an id's length: 16 bytes as hex.
const Len = 32

// Valid reports whether id is 32 lower-case hex characters.
func Valid(id string) bool {
	if len(id) != Len {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
