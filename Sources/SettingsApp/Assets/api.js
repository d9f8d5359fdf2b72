// The server's JSON API: reading a view's data, and sending a change then drawing the view again
// with the daemon's answer (the message it gives a row, or none).

import { at } from "./dom.js";
import { render } from "./navigation.js";

// The daemon's (or the page's own) message per row, shown until the row's next change.
export const rowErrors = new Map();

export async function getJSON(path) {
  const response = await fetch(at(path), { credentials: "same-origin", headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => ({ ok: false, error: { code: "bad_answer", message: `HTTP ${response.status}` } }));
  if (!response.ok) throw Object.assign(new Error(body.error?.message ?? `HTTP ${response.status}`), { code: body.error?.code });
  return body;
}

// How many changes the page has sent. A view read before the latest of them was sent may show
// the value before it, so it is not drawn (`unlessStale`): the change draws the view again once it
// is answered.
export let changesSent = 0;

// Throws, for a view whose data was read while changes went out, the error `render` drops.
export function unlessStale(changesBefore) {
  if (changesSent !== changesBefore) throw Object.assign(new Error("a change was sent while the view was read"), { code: "stale" });
}

async function post(path, body) {
  changesSent += 1;
  const response = await fetch(at(path), {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({ ok: false, error: { code: "bad_answer", message: `HTTP ${response.status}` } }));
  return answer.ok ? null : (answer.error?.message ?? `HTTP ${response.status}`);
}

// Sends a change, keeps the answer's message (or clears it) under `errorId`, and renders again:
// the view then shows what the daemon stored, the new value or the old one back. True when the
// change was taken.
export async function change(path, body, errorId) {
  const message = await post(path, body);
  if (message) rowErrors.set(errorId, message); else rowErrors.delete(errorId);
  await render();
  return !message;
}
