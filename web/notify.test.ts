import assert from "node:assert/strict";
import { test } from "node:test";
import { longWait, NotificationAPI, NotifyOption } from "./notify";
import { EN, ticket } from "./testing";

test("a long wait: a draw, paused, an estimate of 2 minutes or more, or no estimate from place 10", () => {
  assert.equal(longWait(ticket({ eta_s: 60, eta_high_s: 90 })), false);
  assert.equal(longWait(ticket({ eta_s: 60, eta_high_s: 120 })), true, "the range's upper end counts");
  assert.equal(longWait(ticket({ eta_s: 150 })), true);
  assert.equal(longWait(ticket({ eta_s: 30, paused: true })), true, "paused: nobody knows how long");
  assert.equal(longWait(ticket({ eta_s: null, position: 9 })), false);
  assert.equal(longWait(ticket({ eta_s: null, position: 10 })), true);
  assert.equal(longWait(ticket({ eta_s: null, position: 0, queueing_method: "random" })), true, "a draw: nobody knows when");
  assert.equal(longWait(ticket({ state: "admitted", eta_s: 600 })), false);
});

/** fakeEl is the part of an element the option touches. */
function fakeEl() {
  const attrs: Record<string, string> = {};
  const clicks: (() => void)[] = [];
  return {
    hidden: true,
    textContent: "",
    attrs,
    setAttribute: (k: string, v: string) => void (attrs[k] = v),
    addEventListener: (_: string, fn: () => void) => void clicks.push(fn),
    click: () => clicks.forEach((fn) => fn()),
  };
}

const STRINGS = { ...EN, "admitted.heading": "It's your turn", "notify.on": "On", "notify.off": "Off", "notify.blocked": "Blocked", "notify.body": "Your turn in {title}." };

function setup(permission: NotificationPermission, answer: NotificationPermission = permission, stored: Record<string, string> = {}) {
  const els = { "notify-box": fakeEl(), notify: fakeEl(), "notify-status": fakeEl() };
  const page = {
    el: (id: string) => (els as Record<string, ReturnType<typeof fakeEl>>)[id] ?? null,
    setText: (id: string, text: string) => void ((els as Record<string, ReturnType<typeof fakeEl>>)[id].textContent = text),
  };
  const shown: { title: string; options?: NotificationOptions }[] = [];
  let asked = 0;
  const api = class {
    static permission: NotificationPermission = permission;
    static requestPermission() {
      asked++;
      api.permission = answer;
      return Promise.resolve(answer);
    }
    onclick = null;
    constructor(title: string, options?: NotificationOptions) {
      shown.push({ title, options });
    }
    close() {}
  };
  const store = new Map(Object.entries(stored));
  const storage = {
    getItem: (k: string) => store.get(k) ?? null,
    setItem: (k: string, v: string) => void store.set(k, v),
    removeItem: (k: string) => void store.delete(k),
  } as unknown as Storage;
  const opt = new NotifyOption(page as never, STRINGS, "en", "drop", "t1", {
    api: api as unknown as NotificationAPI,
    store: storage,
    focus: () => {},
  });
  return { els, opt, shown, store, asked: () => asked };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

test("offered on a long wait only, then kept", () => {
  const { els, opt } = setup("default");
  opt.offer(ticket({ eta_s: 30 }));
  assert.equal(els["notify-box"].hidden, true);
  opt.offer(ticket({ eta_s: 300 }));
  assert.equal(els["notify-box"].hidden, false);
  opt.offer(ticket({ eta_s: 30 }));
  assert.equal(els["notify-box"].hidden, false, "no flicker as the estimate shrinks");
});

test("asks for permission on the click; granted: on, said, kept, and shown at admission", async () => {
  const { els, opt, shown, store, asked } = setup("default", "granted");
  opt.offer(ticket({ eta_s: 300 }));
  els.notify.click();
  await tick();
  assert.equal(asked(), 1);
  assert.equal(els.notify.attrs["aria-pressed"], "true");
  assert.equal(els["notify-status"].textContent, "On");
  assert.equal(store.get("waitroom:notify:drop:t1"), "1");
  assert.equal(opt.admitted("Spring drop"), true);
  assert.deepEqual(shown.map((n) => [n.title, n.options?.body]), [["It's your turn", "Your turn in Spring drop."]]);
});

test("denied: says so, stays off, shows nothing", async () => {
  const { els, opt, shown } = setup("default", "denied");
  els.notify.click();
  await tick();
  assert.equal(els.notify.attrs["aria-pressed"], undefined);
  assert.equal(els["notify-status"].textContent, "Blocked");
  assert.equal(opt.admitted("x"), false);
  assert.equal(shown.length, 0);
});

test("a second click turns it off", async () => {
  const { els, opt, store } = setup("granted");
  els.notify.click();
  await tick();
  els.notify.click();
  await tick();
  assert.equal(els.notify.attrs["aria-pressed"], "false");
  assert.equal(els["notify-status"].textContent, "Off");
  assert.equal(store.has("waitroom:notify:drop:t1"), false);
  assert.equal(opt.admitted("x"), false);
});

test("a reload keeps the choice while the permission stands", () => {
  const kept = setup("granted", "granted", { "waitroom:notify:drop:t1": "1" });
  assert.equal(kept.opt.enabled, true);
  assert.equal(kept.els["notify-box"].hidden, false);
  const revoked = setup("denied", "denied", { "waitroom:notify:drop:t1": "1" });
  assert.equal(revoked.opt.enabled, false);
});
