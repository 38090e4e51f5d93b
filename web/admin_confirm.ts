// Irreversible and sweeping actions ask first: a submit button with
// data-confirm shows its words in a confirm dialog; data-confirm-if="name"
// asks only when the form's field name is "true" (sold out: marking it,
// not undoing it). It listens on the document's capture phase, before the
// forms' own handlers, so a "no" stops the post whichever way it is sent.

export function confirmActions(doc: Document, ask: (text: string) => boolean = (t) => window.confirm(t)): void {
  doc.addEventListener(
    "submit",
    (ev) => {
      const button = (ev as SubmitEvent).submitter as HTMLElement | null;
      const form = ev.target as HTMLFormElement;
      const text = button?.dataset.confirm;
      if (!text) return;
      const when = button.dataset.confirmIf;
      if (when) {
        const field = form.elements.namedItem(when) as HTMLInputElement | null;
        if (field?.value !== "true") return;
      }
      if (!ask(text)) {
        ev.preventDefault();
        ev.stopImmediatePropagation();
      }
    },
    true,
  );
}
