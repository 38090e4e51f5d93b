package templates

import "strconv"

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// stockText says how many are left in a shopper's words.
func stockText(n int64) string {
	switch {
	case n <= 0:
		return "Sold out"
	case n == 1:
		return "Last one in stock"
	}
	return itoa(n) + " left in stock"
}
