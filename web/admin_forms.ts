// The dashboard's forms, posted in place: the controls apply without a page
// load, and the room form shows the server's checks while typing. Every
// post carries the session's CSRF token in X-CSRF-Token.

import { fill, Strings, t } from "./admin_format";

export interface PostResult {
  status: number;
  body: unknown;
}

/** post sends a form's fields as a urlencoded body, asking for JSON. */
export async function post(url: string, body: URLSearchParams, csrf: string): Promise<PostResult> {
  const res = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { Accept: "application/json", "X-CSRF-Token": csrf, "Content-Type": "application/x-www-form-urlencoded" },
    body,
  });
  let parsed: unknown = null;
  try {
    parsed = await res.json();
  } catch {
    // an empty or HTML body
  }
  return { status: res.status, body: parsed };
}

/** fields turns a form (and the button that sent it) into a body, without the token field. */
export function fields(form: HTMLFormElement, submitter?: HTMLElement | null): URLSearchParams {
  const p = new URLSearchParams();
  for (const [k, v] of new FormData(form)) {
    if (k !== "csrf_token" && typeof v === "string") p.append(k, v);
  }
  if (submitter instanceof HTMLButtonElement && submitter.name) p.set(submitter.name, submitter.value);
  return p;
}

/** formField is the input a settings field belongs to: tiers[1].interval_ms is tiers. */
export function formField(field: string): string {
  const i = field.search(/[.[]/);
  return i > 0 ? field.slice(0, i) : field;
}

function showError(form: HTMLElement, name: string, message: string): boolean {
  const el = form.querySelector<HTMLElement>(`[data-error-for="${name}"]`);
  if (!el) return false;
  el.textContent = message;
  el.hidden = message === "";
  return true;
}

function clearErrors(form: HTMLElement): void {
  for (const el of Array.from(form.querySelectorAll<HTMLElement>("[data-error-for]"))) {
    el.textContent = "";
    el.hidden = true;
  }
}

interface APIError {
  error?: { code?: string; field?: string; message?: string; text?: string };
}

/**
 * controlForms posts the room page's control forms in place. onSaved hears
 * the settings the server stored.
 */
export function controlForms(root: HTMLElement, csrf: string, strings: Strings, onSaved: (settings: unknown) => void): void {
  const status = root.querySelector<HTMLElement>('[data-testid="control-status"]');
  const say = (text: string, ok: boolean) => {
    if (!status) return;
    status.textContent = text;
    status.className = ok ? "ok" : "field-error";
    status.hidden = text === "";
  };
  for (const form of Array.from(root.querySelectorAll<HTMLFormElement>("form[data-control]"))) {
    form.addEventListener("input", () => (form.dataset.dirty = "true"));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const submitter = (ev as SubmitEvent).submitter;
      clearErrors(form);
      say("", true);
      form.setAttribute("aria-busy", "true");
      try {
        const res = await post(form.action, fields(form, submitter), csrf);
        if (res.status === 401) {
          location.assign(`/admin/login?next=${encodeURIComponent(location.pathname)}`);
          return;
        }
        const err = (res.body as APIError | null)?.error;
        if (res.status !== 200 || !res.body) {
          // text is the server's words in the page's language.
          const message =
            res.status === 403
              ? t(strings, "admin.error.csrf")
              : err?.text ?? fill(t(strings, "admin.error.http"), { status: String(res.status) });
          if (!err?.field || !showError(form, formField(err.field), message)) {
            say(fill(t(strings, "admin.control.failed"), { message }), false);
          }
          return;
        }
        delete form.dataset.dirty;
        say(t(strings, "admin.control.saved"), true);
        onSaved(res.body);
      } catch (e) {
        console.error("dashboard: control", e);
        say(fill(t(strings, "admin.control.failed"), { message: t(strings, "admin.error.network") }), false);
      } finally {
        form.removeAttribute("aria-busy");
      }
    });
  }
}

/**
 * roomForm asks the server's checks about the fields typed so far and
 * shows each message under its field, once that field was touched.
 */
export function roomForm(form: HTMLFormElement, csrf: string): void {
  const touched = new Set<string>();
  let timer: number | undefined;
  let seq = 0;
  const check = async () => {
    const mine = ++seq;
    const body = fields(form);
    if (form.dataset.create !== "true") body.delete("room");
    let res: PostResult;
    try {
      res = await post(form.dataset.validatePath || "/admin/validate", body, csrf);
    } catch {
      return; // the server's answer on submit still counts
    }
    if (mine !== seq || res.status !== 200) return;
    const errs = ((res.body as { errors?: Record<string, string> } | null)?.errors ?? {}) as Record<string, string>;
    for (const el of Array.from(form.querySelectorAll<HTMLElement>("[data-error-for]"))) {
      const name = el.dataset.errorFor ?? "";
      if (!touched.has(name)) continue;
      el.textContent = errs[name] ?? "";
      el.hidden = !errs[name];
    }
  };
  const touch = (ev: Event) => {
    const input = ev.target as HTMLInputElement | null;
    // An input that is part of a setting (a tier row, "clear the secret")
    // says which in data-field; the rest are named as the setting.
    mark(input?.dataset?.field || input?.name || "");
  };
  const mark = (name: string) => {
    if (!name) return;
    touched.add(name);
    window.clearTimeout(timer);
    timer = window.setTimeout(check, 250);
  };
  form.addEventListener("input", touch);
  form.addEventListener("change", touch);
  showFirstError(form);
  for (const tiers of Array.from(form.querySelectorAll<HTMLElement>("[data-tiers]"))) {
    tierRows(tiers, () => mark(tiers.dataset.tiers || ""));
  }
}

/**
 * tierRows adds a row from the fieldset's template and removes a row,
 * moving focus somewhere sensible and asking the checks again.
 */
export function tierRows(tiers: HTMLElement, changed: () => void): void {
  const rows = tiers.querySelector<HTMLElement>("[data-tier-rows]");
  const template = tiers.querySelector<HTMLTemplateElement>("template[data-tier-template]");
  const add = tiers.querySelector<HTMLButtonElement>("[data-tier-add]");
  if (!rows || !template || !add) return;
  add.addEventListener("click", () => {
    const row = template.content.firstElementChild?.cloneNode(true) as HTMLElement | undefined;
    if (!row) return;
    // A new tier goes before the open-ended last one.
    const last = rows.lastElementChild;
    const lastMax = last?.querySelector<HTMLInputElement>("input[name$='.max_position']");
    if (last && lastMax && lastMax.value === "") rows.insertBefore(row, last);
    else rows.appendChild(row);
    row.querySelector<HTMLInputElement>("input")?.focus();
    changed();
  });
  rows.addEventListener("click", (ev) => {
    const button = (ev.target as HTMLElement | null)?.closest<HTMLElement>("[data-tier-remove]");
    const row = button?.closest<HTMLElement>("[data-tier-row]");
    if (!row) return;
    row.remove();
    add.focus();
    changed();
  });
}

/**
 * showFirstError brings a refused form's first message into view, its input
 * focused, so an operator does not stay at the top of a long form with the
 * reasons below the fold.
 */
export function showFirstError(form: HTMLFormElement): void {
  const first = Array.from(form.querySelectorAll<HTMLElement>("[data-error-for]")).find((el) => !el.hidden && (el.textContent ?? "").trim() !== "");
  if (!first) return;
  const name = first.dataset.errorFor ?? "";
  const input = Array.from(form.querySelectorAll<HTMLElement>("input, select, textarea")).find(
    (el) => (el as HTMLInputElement).name === name || el.dataset.field === name,
  );
  (input ?? first).scrollIntoView({ block: "center" });
  input?.focus({ preventScroll: true });
}
