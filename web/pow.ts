// Proof of work: solve a room's challenge in Web Workers and return the
// payload that enter takes as "pow". The protocol is ALTCHA v2 with SCRYPT
// (docs/api.md): try counters until scrypt(nonce ‖ counter, salt) starts
// with keyPrefix. Workers split the counters (start i, step n).

export interface Challenge {
  parameters: Record<string, unknown> & { nonce: string; expiresAt: number };
  signature: string;
}

interface Solution {
  counter: number;
  derivedKey: string;
  time?: number;
}

/** isChallenge checks the shape the server sends, enough to hand it to the workers. */
export function isChallenge(v: unknown): v is Challenge {
  const c = v as Challenge | null;
  return !!c && typeof c === "object" && typeof c.signature === "string" &&
    !!c.parameters && typeof c.parameters.nonce === "string";
}

/** encodePayload is base64 of {challenge, solution}, as ALTCHA's widget sends it. */
export function encodePayload(challenge: Challenge, solution: Solution): string {
  return btoa(JSON.stringify({ challenge, solution }));
}

/** workerCount: the cores the browser admits to, within reason. */
export function workerCount(cores: number | undefined): number {
  return Math.min(Math.max(Math.floor(cores || 1), 1), 8);
}

/** solve runs the workers until one finds the counter; it rejects if none can. */
export function solve(challenge: Challenge, workerURL: string, timeoutMs = 90_000): Promise<string> {
  const n = workerCount(navigator.hardwareConcurrency);
  const workers: Worker[] = [];
  return new Promise<string>((resolve, reject) => {
    let failed = 0;
    const stop = () => workers.forEach((w) => w.terminate());
    const timer = window.setTimeout(() => {
      stop();
      reject(new Error("pow: timed out"));
    }, timeoutMs);
    const fail = (why: string) => {
      if (++failed < n) return;
      window.clearTimeout(timer);
      stop();
      reject(new Error(why));
    };
    for (let i = 0; i < n; i++) {
      let w: Worker;
      try {
        w = new Worker(workerURL);
      } catch (e) {
        fail(String(e));
        continue;
      }
      workers.push(w);
      w.onmessage = (ev: MessageEvent) => {
        const s = ev.data as Solution | { error: unknown } | null;
        if (s && "counter" in s && typeof s.derivedKey === "string") {
          window.clearTimeout(timer);
          stop();
          resolve(encodePayload(challenge, { counter: s.counter, derivedKey: s.derivedKey, time: s.time }));
        } else {
          fail("pow: a worker found nothing");
        }
      };
      w.onerror = () => fail("pow: a worker failed");
      w.postMessage({ type: "work", challenge, counterStart: i, counterStep: n, counterMode: "uint32", timeout: timeoutMs });
    }
  });
}

/** retryAfterMs reads a 503's Retry-After (seconds), within 1 to 10 s. */
export function retryAfterMs(header: string | null): number {
  const s = Number(header);
  return Math.min(Math.max(Number.isFinite(s) ? s : 1, 1), 10) * 1000;
}

/**
 * fetchChallenge gets a fresh challenge from the room's challenge URL. The
 * server makes challenges ahead of time at a bounded rate: when none is ready
 * it answers 503 with Retry-After, and this asks again, a while.
 */
export async function fetchChallenge(url: string, headers: Record<string, string> = {}, tries = 30): Promise<Challenge> {
  for (let i = 1; ; i++) {
    const res = await fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json", ...headers } });
    if (res.status === 503 && i < tries) {
      await new Promise((r) => setTimeout(r, retryAfterMs(res.headers.get("Retry-After"))));
      continue;
    }
    const body: unknown = await res.json();
    if (!res.ok || !isChallenge(body)) throw new Error(`challenge: ${res.status}`);
    return body;
  }
}

/** challengeBeside reads the fresh challenge a refused enter carries, if any. */
export function challengeBeside(text: string): Challenge | null {
  try {
    const c = JSON.parse(text)?.challenge;
    return isChallenge(c) ? c : null;
  } catch {
    return null;
  }
}
