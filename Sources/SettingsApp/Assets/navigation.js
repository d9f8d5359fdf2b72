// Moving between views: the addresses of an app's panes, links that move without loading the
// page, the header's title and back link, and the request to draw the view again.

import { at, back, backTitle, element, titleElement } from "./dom.js";
import { words } from "./words.js";

// Drawing a view (app.js) needs every view, and every view needs to move and to draw again, so
// the entry module hands its `render` over here at start-up rather than being imported.
let renderView = async () => {};
export function setRenderer(render) { renderView = render; }
export function render() { return renderView(); }

export function navigate(href, replace = false) {
  if (replace) history.replaceState(null, "", at(href)); else history.pushState(null, "", at(href));
  render();
}

export function link(href, attributes, ...children) {
  return element("a", { href: at(href), ...attributes, onclick: (event) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(href);
  } }, ...children);
}

export function appPath(domain, parameters = {}) {
  const query = new URLSearchParams(Object.entries(parameters).filter(([, value]) => value !== undefined && value !== null));
  const text = query.toString();
  return `/apps/${encodeURIComponent(domain)}${text ? "?" + text : ""}`;
}

export function setHeader(title, backHref, backText) {
  titleElement.textContent = title;
  document.title = title === words.settings ? title : `${title} — ${words.settings}`;
  back.hidden = !backHref;
  if (backHref) {
    back.href = at(backHref);
    backTitle.textContent = backText;
    back.onclick = (event) => { event.preventDefault(); navigate(backHref); };
  }
}
