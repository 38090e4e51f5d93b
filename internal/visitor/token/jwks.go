package token

import "encoding/json"

type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}

// JWKS is the public JSON Web Key Set of every key, for checkout to verify
// entry tokens without the private key.
func (ks *Keyset) JWKS() []byte {
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: make([]jwk, 0, len(ks.keys))}
	for _, k := range ks.keys {
		set.Keys = append(set.Keys, jwk{Kty: "OKP", Crv: "Ed25519", X: b64(k.pub), Kid: k.kid, Alg: "EdDSA", Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		panic("token: marshal jwks: " + err.Error()) // plain strings cannot fail to marshal
	}
	return b
}
