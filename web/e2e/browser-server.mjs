// The shared Chromium of one Go test process (internal/testkit/browsertest):
// prints "WS <endpoint>" once the browser listens, then serves every
// script's connection until its stdin closes, which happens when the test
// process exits however it ends.

import { chromium } from "playwright-core";
import { ARGS, CHROMIUM } from "./browser.mjs";

const server = await chromium.launchServer({ executablePath: CHROMIUM, headless: true, args: ARGS, host: "127.0.0.1" });
console.log("WS " + server.wsEndpoint());
process.stdin.resume();
const stop = async () => {
  await server.close().catch(() => {});
  process.exit(0);
};
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.on("SIGTERM", stop);
