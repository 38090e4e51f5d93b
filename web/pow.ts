// Proof of work: solve a room's challenge in Web Workers and return the
// payload that enter takes as "pow". The format is waitroom's hashcash over
// scrypt (docs/api.md): try counters until the first 48 bits of
// scrypt(nonce ‖ counter, salt) are below the target. Workers split the
// counters (start i, step n).
import type { Challenge } from "./pow-target";

export type { Challenge };

interface Solution {
  counter: number;
}

/** isChallenge checks the shape the server sends, enough to hand it to the workers. */
export function isChallenge(v: unknown): v is Challenge {
  const c = v as Challenge | null;
  return !!c && typeof c === "object" && typeof c.signature === "string" &&
    !!c.parameters && typeof c.parameters.nonce === "string" && typeof c.parameters.salt === "string" &&
    typeof c.parameters.target === "string" && typeof c.parameters.difficulty === "number";
}

/** encodePayload is base64 of {challenge, solution}, as the server parses it. */
export function encodePayload(challenge: Challenge, solution: Solution): string {
  return btoa(JSON.stringify({ challenge, solution }));
}

/** workerCount: the cores the browser admits to, within reason. */
export function workerCount(cores: number | undefined): number {
  return Math.min(Math.max(Math.floor(cores || 1), 1), 8);
}

/**
 * solve runs the workers until one finds the counter; it rejects if none can
 * within the timeout, by default 90 s for each first place's work it costs.
 */
export function solve(challenge: Challenge, workerURL: string, timeoutMs = 90_000 * factor(challenge)): Promise<string> {
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
        if (s && "counter" in s && typeof s.counter === "number") {
          window.clearTimeout(timer);
          stop();
          resolve(encodePayload(challenge, { counter: s.counter }));
        } else {
          fail("pow: a worker found nothing");
        }
      };
      w.onerror = () => fail("pow: a worker failed");
      w.postMessage({ challenge, start: i, step: n });
    }
  });
}

/** retryAfterMs reads a 429's or 503's Retry-After (seconds), within 1 to 10 s. */
export function retryAfterMs(header: string | null): number {
  const s = Number(header);
  return Math.min(Math.max(Number.isFinite(s) ? s : 1, 1), 10) * 1000;
}

/**
 * fetchChallenge gets a fresh challenge from the room's challenge URL. When
 * the client's network asked for too many (429) or the server is busy (503),
 * it waits the answer's Retry-After and asks again, a while.
 */
export async function fetchChallenge(url: string, headers: Record<string, string> = {}, tries = 30): Promise<Challenge> {
  for (let i = 1; ; i++) {
    const res = await fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json", ...headers } });
    if ((res.status === 429 || res.status === 503) && i < tries) {
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

/** longer reports whether a challenge costs more than the room's first places. */
export function longer(c: Challenge): boolean {
  return c.parameters.difficulty > c.parameters.base;
}

/** factor is how many times a first place's work a challenge costs, rounded. */
export function factor(c: Challenge): number {
  return Math.max(1, Math.round(c.parameters.difficulty / Math.max(1, c.parameters.base)));
}
