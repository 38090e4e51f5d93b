package token

import (
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// Why a token was refused. Every error Verify and ParseUserToken return wraps
// one of these, so errors.Is tells the API which reason to show.
var (
	ErrMalformed   = errors.New("token malformed")
	ErrForged      = errors.New("token forged") // bad signature, unknown kid, wrong alg or issuer
	ErrExpired     = errors.New("token expired")
	ErrNotYetValid = errors.New("token not yet valid")
)

// Reason names the refusal in err for API responses: "malformed", "forged",
// "expired" or "not_yet_valid"; "invalid" for any other error, "" for nil.
func Reason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrMalformed):
		return "malformed"
	case errors.Is(err, ErrForged):
		return "forged"
	case errors.Is(err, ErrExpired):
		return "expired"
	case errors.Is(err, ErrNotYetValid):
		return "not_yet_valid"
	}
	return "invalid"
}

// classify wraps a jwt parse error in the sentinel for its reason. Signature
// checks run before claim checks, so an expired forgery is reported forged.
func classify(action string, err error) error {
	var reason error
	switch {
	case errors.Is(err, jwt.ErrTokenSignatureInvalid),
		errors.Is(err, jwt.ErrTokenUnverifiable), // unknown kid or alg
		errors.Is(err, jwt.ErrTokenInvalidIssuer):
		reason = ErrForged
	case errors.Is(err, jwt.ErrTokenExpired):
		reason = ErrExpired
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		reason = ErrNotYetValid
	default: // undecodable, missing exp, claims of the wrong type
		reason = ErrMalformed
	}
	return fmt.Errorf("token: %s: %w: %w", action, reason, err)
}

// maxTokenLen bounds the work an attacker can make a single check do.
const maxTokenLen = 8 << 10

// checkAlphabet refuses anything but base64url and dots. Go's base64 decoder
// skips \r and \n, so without this a token with a newline in its signature
// would decode to the same signature and pass as a different string.
func checkAlphabet(action, tok string) error {
	if tok == "" {
		return fmt.Errorf("token: %s: %w: empty", action, ErrMalformed)
	}
	if len(tok) > maxTokenLen {
		return fmt.Errorf("token: %s: %w: longer than %d bytes", action, ErrMalformed, maxTokenLen)
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("token: %s: %w: byte %d is not base64url", action, ErrMalformed, i)
		}
	}
	return nil
}
