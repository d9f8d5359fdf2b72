// The Settings app's page, started here: draws the view the address names, keeps it drawn
// across moves and changes, and listens for the domains that change.
//
// Plain JavaScript modules, no build step: the server serves each file as it stands. The page
// renders what the server's JSON API answers (the daemon's own pane descriptions), sends what a
// person does (which switch position, option, number or text: never a typed value, which the
// server makes), and listens on /live for the domains that changed, to ask again.

import { base, element, view } from "./dom.js";
import { keepTimesCurrent, renderHistory, renderPlain } from "./domains.js";
import { listen } from "./live.js";
import { setRenderer } from "./navigation.js";
import { renderApp } from "./panes.js";
import { renderRoot } from "./root.js";
import { useLanguage } from "./words.js";

let renderToken = 0;

async function render() {
  const token = ++renderToken;
  const path = location.pathname.slice(base.length) || "/";
  const query = new URLSearchParams(location.search);
  let content;
  useLanguage([...navigator.languages]);
  try {
    if (path.startsWith("/apps/")) content = await renderApp(decodeURIComponent(path.slice(6)), query);
    else if (path.startsWith("/domains/")) content = await renderPlain(decodeURIComponent(path.slice(9)));
    else if (path.startsWith("/history/")) content = await renderHistory(decodeURIComponent(path.slice(9)));
    else content = await renderRoot(query.get("q") ?? "");
  } catch (error) {
    if (error.code === "unreachable") return;  // the status line says so; render again when it is back
    if (error.code === "stale") return;  // a change went out while it was read; its answer renders again
    content = element("p", { class: "empty" }, error.message);
  }
  if (token !== renderToken) return;  // a newer render started while this one waited
  const focus = rememberFocus();
  keepFields(content);
  view.replaceChildren(content);
  restoreFocus(focus);
  document.body.dataset.rendered = String(Date.now());
}

// A setting's field (`…-input`) already on the page stays the same element when the new view
// holds it unchanged, or when the person is typing in it, and the fields of a key being added
// always stay: a re-render never swaps a field out from under someone (or from under a script
// that holds it), nor empties a form being filled in. The handlers read only the event's target
// or the fields by id, so a kept element still stands for the same thing.
function keepFields(content) {
  for (const fresh of content.querySelectorAll("input[id$='-input'], .add-key [id]")) {
    const old = document.getElementById(fresh.id);
    if (!old || !view.contains(old) || old.tagName !== fresh.tagName || old.type !== fresh.type) continue;
    const typing = old === document.activeElement && old.dataset.dirty === "true";
    const same = old.value === fresh.value && old.checked === fresh.checked && old.disabled === fresh.disabled;
    const draft = fresh.closest(".add-key") !== null;
    if (typing || same || draft) fresh.replaceWith(old);
  }
}

// A live update re-renders the view; a field the person is typing in keeps its text and focus.
function rememberFocus() {
  const active = document.activeElement;
  if (!active || !active.id || !view.contains(active)) return null;
  return { id: active.id, value: active.value, dirty: active.dataset.dirty === "true" };
}
function restoreFocus(focus) {
  if (!focus) return;
  const again = document.getElementById(focus.id);
  if (!again) return;
  if (focus.dirty && "value" in again) { again.value = focus.value; again.dataset.dirty = "true"; }
  again.focus();
}

setRenderer(render);
window.addEventListener("popstate", () => render());
render();
listen();
keepTimesCurrent();
