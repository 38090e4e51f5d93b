// The proof-of-work solver's Web Worker: ALTCHA's scrypt worker (hash-wasm's
// WebAssembly scrypt), which speaks the protocol the server issues. See
// docs/api.md "Proof of work" and internal/pow.
import "altcha/workers/scrypt";
