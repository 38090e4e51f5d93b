package server

// validHolder accepts what a gate sends as the holder of a token: an opaque
// id (the middleware sends "v:" and a hash of its own visitor cookie), short
// and plain, since it is stored beside the ticket until the token expires.
func validHolder(h string) bool {
	if len(h) > 128 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
