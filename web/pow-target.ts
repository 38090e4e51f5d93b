// The arithmetic of waitroom's proof of work, shared by the worker and the
// tests: see internal/visitor/pow.

/** The parameters of a challenge, as the server signs them. */
export interface Parameters {
  algorithm: string;
  n: number;
  r: number;
  p: number;
  key_length: number;
  nonce: string;
  salt: string;
  difficulty: number;
  target: string;
  base: number;
  held: number;
  expires_at: number;
}

export interface Challenge {
  parameters: Parameters;
  signature: string;
}

/** What the page posts to a worker. */
export interface WorkMessage {
  challenge: Challenge;
  start: number;
  step: number;
}

/** hexBytes decodes lowercase hex. */
export function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** passwordFor is scrypt's password of one try: nonce ‖ uint32be(counter). */
export function passwordFor(nonce: Uint8Array, counter: number): Uint8Array {
  const pw = new Uint8Array(nonce.length + 4);
  pw.set(nonce);
  new DataView(pw.buffer).setUint32(nonce.length, counter >>> 0, false);
  return pw;
}

/** below reports whether a key's first 48 bits, big-endian, are under target. */
export function below(key: Uint8Array, target: number): boolean {
  let v = 0;
  for (let i = 0; i < 6; i++) v = v * 256 + key[i];
  return v < target;
}
