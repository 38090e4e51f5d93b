// The example shop page (go run ./cmd/waitroom, then the embed demo's URL):
// what a shop writes around Waitroom.mount. It shows the place from
// onUpdate, and on admission waits for orderable_at (the token is not valid
// before) and then takes the whole tab to checkout.

import { Admission } from "../../web/embed-messages";
import { Ticket } from "../../web/ticket";

interface WaitroomSDK {
  mount(el: Element, o: object): Promise<Admission>;
}

function main(): void {
  const root = document.querySelector<HTMLElement>("[data-embed-demo]");
  const line = document.getElementById("waitroom-line");
  const status = document.querySelector<HTMLElement>('[data-testid="demo-status"]');
  const sdk = (window as unknown as { Waitroom?: WaitroomSDK }).Waitroom;
  if (!root || !line || !status || !sdk) return;
  const say = (text: string) => {
    status.textContent = text;
  };
  sdk
    .mount(line, {
      room: root.dataset.room,
      server: root.dataset.server,
      onUpdate(t: Ticket) {
        say(t.state === "waiting" ? `Place in line: ${t.position}` : `Line state: ${t.state}`);
      },
    })
    .then((a) => {
      status.dataset.token = a.token;
      say("Admitted: taking you to checkout…");
      const wait = Math.max(0, Date.parse(a.orderable_at) - Date.now());
      setTimeout(() => location.assign(a.redirect_url), wait);
    })
    .catch((e: unknown) => say(`The line could not be shown: ${String(e)}`));
}

main();
