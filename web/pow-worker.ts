// The proof-of-work solver's Web Worker: waitroom's hashcash over scrypt
// (docs/api.md "Proof of work", internal/visitor/pow), with hash-wasm's WebAssembly
// scrypt. It tries counters start, start + step, … until the first 48 bits
// of scrypt(nonce ‖ uint32be(counter), salt) are below the target, and
// posts {counter}; {error} when it cannot.
import { scrypt } from "hash-wasm";
import { below, hexBytes, passwordFor, type WorkMessage } from "./pow-target";

const MAX_COUNTER = 0xffffffff;

self.onmessage = async (ev: MessageEvent<WorkMessage>) => {
  const { challenge, start, step } = ev.data;
  try {
    const p = challenge.parameters;
    const nonce = hexBytes(p.nonce);
    const salt = hexBytes(p.salt);
    const target = parseInt(p.target, 16);
    for (let n = start; n <= MAX_COUNTER; n += step) {
      const key = await scrypt({
        password: passwordFor(nonce, n), salt, costFactor: p.n, blockSize: p.r, parallelism: p.p,
        hashLength: p.key_length, outputType: "binary",
      });
      if (below(key, target)) {
        self.postMessage({ counter: n });
        return;
      }
    }
    self.postMessage({ error: "no counter solves it" });
  } catch (e) {
    self.postMessage({ error: String(e) });
  }
};
