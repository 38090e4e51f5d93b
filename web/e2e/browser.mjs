// openBrowser gives a script its Chromium: the test process's shared one
// when BROWSER_WS names it (browser-server.mjs, started once per Go test
// process), else one of its own. Starting Chromium costs about a second of
// CPU, paid once per test process instead of once per script.

import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"];

/**
 * openBrowser connects to the shared browser or launches one. Closing what it
 * returns closes this script's contexts; a shared browser stays up for the
 * next script.
 */
export async function openBrowser(timeout) {
  const ws = process.env.BROWSER_WS;
  if (ws) return chromium.connect(ws, { timeout });
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout });
}
