// The root view: the search field, and under it either the search's results or the apps of the
// installed Settings bundles and the other domains.

import { getJSON } from "./api.js";
import { at, element, group, languageSelect } from "./dom.js";
import { watch } from "./live.js";
import { appPath, link, navigate, setHeader } from "./navigation.js";
import { words } from "./words.js";

export async function renderRoot(search) {
  setHeader(words.settings);
  languageSelect.hidden = true;
  watch(true);
  const overview = await getJSON("/api/overview");
  // The field is a `…-input`: while someone types in it, the re-render that shows the results
  // keeps this very element, its text and its cursor (keepFields in app.js).
  const field = element("input", {
    class: "search", id: "search-input", type: "search", placeholder: words.search, "aria-label": words.searchLabel,
    value: search, autocomplete: "off",
    oninput: (event) => {
      event.target.dataset.dirty = "true";
      clearTimeout(field.pending);
      field.pending = setTimeout(() => navigate(event.target.value ? `/?q=${encodeURIComponent(event.target.value)}` : "/", true), 150);
    },
  });
  const parts = [field];
  if (search) {
    const found = await getJSON(`/api/search?q=${encodeURIComponent(search)}`);
    parts.push(group(words.results, null, found.results.length === 0
      ? [element("div", { class: "row disabled" }, element("span", { class: "title" }, words.noResults))]
      : found.results.map((result) => link(appPath(result.domain, { pane: result.pane }), { class: "row link search-result" },
          element("span", { class: "title" }, result.title ?? result.key),
          element("span", { class: "detail" }, [result.app ?? result.domain, result.paneTitle].filter(Boolean).join(" › "))))));
    return element("div", {}, parts);
  }
  parts.push(group(words.apps, null, overview.apps.length === 0
    ? [element("div", { class: "row disabled" }, element("span", { class: "title" }, words.noBundles))]
    : overview.apps.map((app) => link(appPath(app.domain), { class: "row link app", "data-domain": app.domain },
        element("img", { class: "app-icon", alt: "",
          src: at(app.icon ? `/api/apps/${encodeURIComponent(app.domain)}/icon` : "/assets/icon.svg") }),
        element("span", { class: "title" }, app.title ?? app.domain))), { id: "apps" }));
  parts.push(group(words.otherDomains, words.otherDomainsFooter, overview.otherDomains.length === 0
    ? [element("div", { class: "row disabled" }, element("span", { class: "title" }, words.none))]
    : overview.otherDomains.map((domain) => link(`/domains/${encodeURIComponent(domain)}`, { class: "row link domain", "data-domain": domain },
        element("span", { class: "title key" }, domain))), { id: "other-domains" }));
  return element("div", {}, parts);
}
