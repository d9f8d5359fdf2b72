// The Settings app's page. Plain JavaScript, no build step: it renders what the server's JSON
// API answers (the daemon's own pane descriptions), sends what a person does (which switch
// position, option, number or text: never a typed value, which the server makes), and listens
// on /live for the domains that changed, to ask again.

// Every address of the app lies under a secret path prefix (its session cookie is sent only
// there); the server puts it in data-base. The code below speaks of paths without it ("/apps/…"),
// and `at` adds it.
const base = document.documentElement.dataset.base;
const at = (path) => base + path;

const view = document.getElementById("view");
const titleElement = document.getElementById("title");
const back = document.getElementById("back");
const backTitle = document.getElementById("back-title");
const languageSelect = document.getElementById("language");
const statusLine = document.getElementById("status");

// The app's own words, in English and French. A pane's words follow the pane's language (the
// bundle's .lproj chosen for the browser, or picked in the header); every other view follows
// the browser's languages. The daemon's messages come as the daemon words them.
const WORDS = {
  en: {
    settings: "Settings", search: "Search", searchLabel: "Search settings", results: "Results", noResults: "No results",
    apps: "Apps", noBundles: "No Settings bundles installed", otherDomains: "Other domains",
    otherDomainsFooter: "Domains without a Settings bundle, edited key by key.", none: "None", noPanes: "This bundle has no panes.",
    administrator: "Set by your administrator", changed: "Changed", reset: "Reset to default",
    secureSet: "Set — type to replace", secureUnset: "Not set", secureValue: "Secure value, set",
    delete: "Delete", deleteKey: (key) => `Delete ${key}`, key: "Key", newKey: "New key", type: "Type", value: "Value", add: "Add",
    keys: "Keys", noKeys: "No keys", addKey: "Add a key", language: "Language",
    schema: (id) => `GSettings schema ${id}`, schemaDefault: (text) => `default: ${text}`, range: (min, max) => `${min} to ${max}`,
    addElement: "Add an element", addEntry: "Add an entry", moveUp: "Move up", moveDown: "Move down", remove: "Remove",
    count: (n, type) => type === "array" ? `${n} ${n === 1 ? "element" : "elements"}` : `${n} ${n === 1 ? "entry" : "entries"}`,
    daemonGone: "defaultsd is not running; waiting for it to come back…", appGone: "The Settings app is not reachable; reconnecting…",
  },
  fr: {
    settings: "Réglages", search: "Rechercher", searchLabel: "Rechercher dans les réglages", results: "Résultats", noResults: "Aucun résultat",
    apps: "Apps", noBundles: "Aucun bundle de réglages installé", otherDomains: "Autres domaines",
    otherDomainsFooter: "Domaines sans bundle de réglages, modifiés clé par clé.", none: "Aucun", noPanes: "Ce bundle n’a aucune page.",
    administrator: "Défini par votre administrateur", changed: "Modifié", reset: "Rétablir la valeur par défaut",
    secureSet: "Défini — tapez pour remplacer", secureUnset: "Non défini", secureValue: "Valeur protégée, définie",
    delete: "Supprimer", deleteKey: (key) => `Supprimer ${key}`, key: "Clé", newKey: "Nouvelle clé", type: "Type", value: "Valeur", add: "Ajouter",
    keys: "Clés", noKeys: "Aucune clé", addKey: "Ajouter une clé", language: "Langue",
    schema: (id) => `Schéma GSettings ${id}`, schemaDefault: (text) => `par défaut : ${text}`, range: (min, max) => `de ${min} à ${max}`,
    addElement: "Ajouter un élément", addEntry: "Ajouter une entrée", moveUp: "Monter", moveDown: "Descendre", remove: "Retirer",
    count: (n, type) => type === "array" ? `${n} ${n === 1 ? "élément" : "éléments"}` : `${n} ${n === 1 ? "entrée" : "entrées"}`,
    daemonGone: "defaultsd ne tourne pas ; en attente de son retour…", appGone: "L’app Réglages est injoignable ; reconnexion…",
  },
};
let words = WORDS.en;

/** The app's words for the first of `tags` it has (`fr-CA` → French), else English. */
function useLanguage(tags) {
  const chosen = tags.map((tag) => String(tag).toLowerCase().replace("_", "-").split("-")[0]).find((language) => language in WORDS) ?? "en";
  words = WORDS[chosen];
  document.documentElement.lang = chosen;
  languageSelect.setAttribute("aria-label", words.language);
}

// The daemon's (or the page's own) message per row, shown until the row's next change.
const rowErrors = new Map();
// What the current view shows, to know which changes concern it.
let watched = { all: false, domains: new Set() };
let renderToken = 0;

// ---------------------------------------------------------------- requests

async function getJSON(path) {
  const response = await fetch(at(path), { credentials: "same-origin", headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => ({ ok: false, error: { code: "bad_answer", message: `HTTP ${response.status}` } }));
  if (!response.ok) throw Object.assign(new Error(body.error?.message ?? `HTTP ${response.status}`), { code: body.error?.code });
  return body;
}

async function post(path, body) {
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
async function change(path, body, errorId) {
  const message = await post(path, body);
  if (message) rowErrors.set(errorId, message); else rowErrors.delete(errorId);
  await render();
  return !message;
}

// ---------------------------------------------------------------- elements

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name in node && typeof value !== "string") node[name] = value;
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function link(href, attributes, ...children) {
  return element("a", { href: at(href), ...attributes, onclick: (event) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(href);
  } }, ...children);
}

function group(title, footer, rows, attributes = {}) {
  return element("section", { class: "group", ...attributes },
    title ? element("h2", {}, title) : null,
    element("div", { class: "rows" }, rows),
    footer ? element("p", { class: "footer" }, footer) : null);
}

// ---------------------------------------------------------------- navigation

function navigate(href, replace = false) {
  if (replace) history.replaceState(null, "", at(href)); else history.pushState(null, "", at(href));
  render();
}
window.addEventListener("popstate", () => render());

function appPath(domain, parameters = {}) {
  const query = new URLSearchParams(Object.entries(parameters).filter(([, value]) => value !== undefined && value !== null));
  const text = query.toString();
  return `/apps/${encodeURIComponent(domain)}${text ? "?" + text : ""}`;
}

function setHeader(title, backHref, backText) {
  titleElement.textContent = title;
  document.title = title === words.settings ? title : `${title} — ${words.settings}`;
  back.hidden = !backHref;
  if (backHref) {
    back.href = at(backHref);
    backTitle.textContent = backText;
    back.onclick = (event) => { event.preventDefault(); navigate(backHref); };
  }
}

async function render() {
  const token = ++renderToken;
  const path = location.pathname.slice(base.length) || "/";
  const query = new URLSearchParams(location.search);
  let content;
  useLanguage([...navigator.languages]);
  try {
    if (path.startsWith("/apps/")) content = await renderApp(decodeURIComponent(path.slice(6)), query);
    else if (path.startsWith("/domains/")) content = await renderPlain(decodeURIComponent(path.slice(9)));
    else content = await renderRoot(query.get("q") ?? "");
  } catch (error) {
    if (error.code === "unreachable") return;  // the status line says so; render again when it is back
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

// ---------------------------------------------------------------- root

async function renderRoot(search) {
  setHeader(words.settings);
  languageSelect.hidden = true;
  watched = { all: true, domains: new Set() };
  const overview = await getJSON("/api/overview");
  // The field is a `…-input`: while someone types in it, the re-render that shows the results
  // keeps this very element, its text and its cursor (keepFields).
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

// ---------------------------------------------------------------- an app's panes

function findPane(pane, file, parent = null) {
  if (!pane) return null;
  if (pane.file === file) return { pane, parent };
  for (const section of pane.sections) {
    for (const row of section.rows) {
      if (row.control.kind === "childPane" && row.control.pane) {
        const found = findPane(row.control.pane, file, pane);
        if (found) return found;
      }
    }
  }
  return null;
}

function domainsOf(pane, domain, into = new Set([domain])) {
  for (const section of pane?.sections ?? []) {
    for (const row of section.rows) {
      if (row.suite) into.add(row.suite);
      if (row.control.kind === "childPane" && row.control.pane) domainsOf(row.control.pane, domain, into);
    }
  }
  return into;
}

async function renderApp(domain, query) {
  const language = query.get("language");
  const app = await getJSON(`/api/apps/${encodeURIComponent(domain)}${language ? `?language=${encodeURIComponent(language)}` : ""}`);
  watched = { all: false, domains: domainsOf(app.pane, domain) };
  const appTitle = app.title ?? domain;
  const keep = { language: language ?? undefined };
  if (app.language) useLanguage([app.language]);

  languageSelect.hidden = app.languages.length < 2;
  languageSelect.replaceChildren(...app.languages.map((name) => element("option", { value: name, selected: name === app.language }, languageName(name))));
  languageSelect.onchange = () => navigate(appPath(domain, { ...Object.fromEntries(query), language: languageSelect.value }), true);

  if (!app.pane) {
    setHeader(appTitle, "/", words.settings);
    return element("p", { class: "empty" }, app.diagnostics.join("\n") || words.noPanes);
  }
  const file = query.get("pane") ?? app.pane.file;
  const found = findPane(app.pane, file) ?? { pane: app.pane, parent: null };
  const pane = found.pane;
  const title = pane === app.pane ? appTitle : (pane.title ?? appTitle);

  const choose = query.get("choose");
  if (choose !== null) {
    const row = pane.sections.flatMap((section) => section.rows).find((row) => String(row.index) === choose);
    if (row) {
      setHeader(row.title ?? row.key, appPath(domain, { ...keep, pane: pane === app.pane ? undefined : pane.file }), title);
      return renderChoices(domain, pane, row, keep);
    }
  }
  if (found.parent) setHeader(title, appPath(domain, { ...keep, pane: found.parent === app.pane ? undefined : found.parent.file }), found.parent === app.pane ? appTitle : (found.parent.title ?? appTitle));
  else setHeader(title, "/", words.settings);

  // The app's own pane opens with its icon and name, as its desktop entry gives them.
  const heading = pane === app.pane && app.icon
    ? element("div", { class: "app-heading" },
        element("img", { class: "app-icon", alt: "", src: at(`/api/apps/${encodeURIComponent(domain)}/icon`) }),
        element("span", { class: "title" }, appTitle))
    : null;
  return element("div", { class: "pane", "data-file": pane.file }, heading,
    pane.sections.map((section) => group(section.title, section.footer, section.rows.map((row) => renderRow(domain, pane, row, keep)))));
}

function languageName(code) {
  try {
    return new Intl.DisplayNames([code.replace("_", "-")], { type: "language" }).of(code.replace("_", "-")) ?? code;
  } catch { return code; }
}

/** A slider's value as a person reads it: whole numbers as they are, others to two places. */
function sliderText(value) { return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/0+$/, "").replace(/\.$/, ""); }

function rowId(pane, row) { return `row-${pane.file}-${row.index}`.replace(/[^A-Za-z0-9_-]/g, "_"); }

function renderRow(domain, pane, row, keep) {
  const id = rowId(pane, row);
  const locked = row.locked === true;
  const control = row.control;
  const title = element("span", { class: "title" }, row.title ?? row.key ?? "");
  const error = element("p", { class: "error", role: "alert" }, rowErrors.get(id) ?? "");
  const attributes = { class: "row", id, "data-key": row.key, "data-kind": control.kind, "data-source": row.source };

  const send = (input) => change(`/api/apps/${encodeURIComponent(domain)}/rows`, { file: pane.file, index: row.index, input }, id);

  const marks = element("div", { class: "marks" });
  if (locked) marks.append(element("span", { class: "locked" }, words.administrator));
  // "Changed" and its reset only where the bundle gives a default to go back to.
  else if (row.source === "stored" && row.key && "defaultValue" in row) {
    marks.append(element("span", { class: "changed" }, words.changed),
      element("button", { class: "reset", type: "button",
        onclick: () => change(`/api/apps/${encodeURIComponent(domain)}/rows/reset`, { file: pane.file, index: row.index }, id) }, words.reset));
  }

  switch (control.kind) {
    case "toggleSwitch":
      return element("div", attributes, title,
        element("input", { type: "checkbox", role: "switch", id: `${id}-input`, "aria-label": row.title ?? row.key,
          checked: control.on, disabled: locked, onchange: (event) => send({ on: event.target.checked }) }),
        marks, error);
    case "slider": {
      // An image the bundle names but does not hold is left out, as iOS does.
      const image = (name) => name ? element("img", { class: "slider-image", alt: "", src: at(`/api/apps/${encodeURIComponent(domain)}/images/${encodeURIComponent(name)}`),
        onerror: (event) => event.target.remove() }) : null;
      // The value beside the slider, as it moves; iOS shows none, but a page has no feel of the thumb.
      const shown = element("output", { class: "slider-value", id: `${id}-value`, for: `${id}-input` },
        typeof row.value === "number" ? sliderText(row.value) : "");
      const range = element("input", { type: "range", id: `${id}-input`, "aria-label": row.title ?? row.key,
        min: control.minimum ?? 0, max: control.maximum ?? 1, step: "any", value: typeof row.value === "number" ? row.value : "",
        disabled: locked, oninput: (event) => { shown.textContent = sliderText(Number(event.target.value)); },
        onchange: (event) => send({ number: event.target.value }) });
      return element("div", attributes, row.title ? title : null, image(control.minimumImage), range, image(control.maximumImage), shown, marks, error);
    }
    case "textField": {
      const types = { numberPad: "number", decimalPad: "number", url: "url", emailAddress: "email" };
      const capitalisation = { None: "none", Sentences: "sentences", Words: "words", AllCharacters: "characters" };
      const isSet = row.source !== "unset";
      const input = element("input", {
        id: `${id}-input`, "aria-label": row.title ?? row.key,
        type: control.secure ? "password" : (types[control.keyboard] ?? "text"),
        step: types[control.keyboard] === "number" ? "any" : undefined,
        inputmode: control.keyboard === "numbersAndPunctuation" ? "decimal" : undefined,
        autocapitalize: capitalisation[control.autocapitalization] ?? "none",
        autocorrect: control.autocorrection === "No" ? "off" : "on",
        spellcheck: control.autocorrection === "No" ? "false" : "true",
        autocomplete: control.secure ? "new-password" : "off",
        placeholder: control.secure ? (isSet ? words.secureSet : words.secureUnset) : "",
        disabled: locked,
        oninput: (event) => { event.target.dataset.dirty = "true"; },
        // Committed: from now on the field shows what the daemon stored (the new text, or the old one back).
        onchange: (event) => { event.target.dataset.dirty = "false"; send({ text: event.target.value }); },
      });
      // A secure value never comes to the page: the field starts empty, its placeholder says whether one is set.
      if (!control.secure) input.value = row.display ?? "";
      return element("div", attributes, title, input, marks, error);
    }
    case "multiValue": {
      const selected = control.options.find((option) => option.selected);
      const shown = selected ? (selected.shortTitle ?? selected.title) : row.display;
      if (locked) return element("div", { ...attributes, class: "row disabled" }, title, element("span", { class: "detail" }, shown), marks, error);
      return element("div", attributes,
        link(appPath(domain, { ...keep, pane: pane.file, choose: row.index }), { class: "row-link", id: `${id}-open` },
          title, element("span", { class: "detail" }, shown)),
        marks, error);
    }
    case "radioGroup":
      return element("div", { ...attributes, class: "row radio", role: "radiogroup", "aria-label": row.title ?? row.key },
        control.options.map((option, index) => element("button", {
          class: "row option", type: "button", role: "radio", id: `${id}-option-${index}`, "aria-checked": option.selected ? "true" : "false",
          disabled: locked, onclick: () => send({ option: index }),
        }, option.title)),
        marks, error);
    case "titleValue":
      return element("div", attributes, title, element("span", { class: "detail" }, row.display));
    case "childPane":
      return link(appPath(domain, { ...keep, pane: control.file }), { ...attributes, class: "row link" }, title);
    default:
      return element("div", { ...attributes, class: "row disabled", "aria-disabled": "true" }, title,
        element("span", { class: "detail" }, `Not supported here (${row.type ?? "no Type"})`));
  }
}

function renderChoices(domain, pane, row, keep) {
  const id = rowId(pane, row);
  const error = element("p", { class: "error", role: "alert" }, rowErrors.get(id) ?? "");
  const choose = (index) => change(`/api/apps/${encodeURIComponent(domain)}/rows`, { file: pane.file, index: row.index, input: { option: index } }, id);
  return element("div", { class: "choices", "data-key": row.key },
    group(null, null, row.control.options.map((option, index) => element("button", {
      class: "row option", type: "button", role: "radio", id: `${id}-option-${index}`, "aria-checked": option.selected ? "true" : "false",
      onclick: () => choose(index),
    }, option.title))),
    error);
}

// ---------------------------------------------------------------- other domains

async function renderPlain(domain) {
  setHeader(domain, "/", words.settings);
  languageSelect.hidden = true;
  watched = { all: false, domains: new Set([domain]) };
  const data = await getJSON(`/api/domains/${encodeURIComponent(domain)}`);
  plainTrees.clear();
  const errorId = `plain-${domain}`;
  const message = element("p", { class: "error", role: "alert", id: "plain-error" }, rowErrors.get(errorId) ?? "");
  const set = (key, type, text) => change(`/api/domains/${encodeURIComponent(domain)}/keys`,
    type === "array" || type === "dictionary" ? { key, tree: emptyNode(type) } : { key, type, text }, errorId);
  const setTree = (key, tree) => change(`/api/domains/${encodeURIComponent(domain)}/keys`, { key, tree }, errorId);

  const rows = data.keys.map((entry) => {
    const id = `key-${entry.key}`.replace(/[^A-Za-z0-9_-]/g, "_");
    let editor;
    let tree = null;
    if (entry.secret) editor = element("span", { class: "detail" }, words.secureValue);
    else if (entry.tree && entry.editable) {
      // The whole value is edited as a copy, and sent back whole at each change.
      plainTrees.set(entry.key, structuredClone(entry.tree));
      editor = element("span", { class: "detail" }, words.count((entry.tree.items ?? entry.tree.entries).length, entry.tree.type));
      tree = renderTree(entry.key, [], id, (key) => setTree(key, plainTrees.get(key)), data.types);
    }
    else if (!entry.editable) editor = element("span", { class: "detail key" }, entry.text);
    else if (entry.type === "bool") {
      editor = element("input", { type: "checkbox", role: "switch", id: `${id}-input`, "aria-label": entry.key, checked: entry.text === "true",
        onchange: (event) => set(entry.key, "bool", event.target.checked ? "true" : "false") });
    } else {
      editor = element("input", { type: "text", id: `${id}-input`, "aria-label": entry.key, value: entry.text,
        oninput: (event) => { event.target.dataset.dirty = "true"; },
        onchange: (event) => { event.target.dataset.dirty = "false"; set(entry.key, entry.type, event.target.value); } });
    }
    return element("div", { class: "row", id, "data-key": entry.key, "data-type": entry.type },
      element("span", { class: "title key" }, entry.key), element("span", { class: "type" }, entry.type), editor,
      entry.forced ? element("div", { class: "marks" }, words.administrator) : null,
      entry.forced ? null : element("button", { class: "delete", type: "button", "aria-label": words.deleteKey(entry.key),
        onclick: () => change(`/api/domains/${encodeURIComponent(domain)}/keys/delete`, { key: entry.key }, errorId) }, words.delete),
      tree);
  });

  const keyField = element("input", { id: "new-key", placeholder: words.key, required: true, "aria-label": words.newKey });
  const typeField = element("select", { id: "new-type", "aria-label": words.type },
    data.types.map((type) => element("option", { value: type }, type)));
  const valueField = element("input", { id: "new-value", placeholder: words.value, "aria-label": words.value });
  // The fields are read by id when the form is sent: a re-render keeps the ones being filled in.
  const form = element("form", { class: "add-key", onsubmit: async (event) => {
    event.preventDefault();
    const field = (id) => document.getElementById(id);
    if (await set(field("new-key").value, field("new-type").value, field("new-value").value)) {
      field("new-key").value = "";
      field("new-value").value = "";
    }
  } }, keyField, typeField, valueField, element("button", { class: "add", type: "submit" }, words.add));

  return element("div", { class: "plain", "data-domain": domain },
    data.schema ? renderSchema(domain, data, set, errorId) : null,
    group(words.keys, null, rows.length ? rows : [element("div", { class: "row disabled" }, element("span", { class: "title" }, words.noKeys))]),
    group(words.addKey, null, [form]),
    message);
}

// A domain that GSettings programs keep here, as dconf-editor shows it: each key of its
// schema with its summary, description, type, default and range or choices, edited with the
// control its type calls for. The app checks each value against the schema before it writes
// it, and a refusal shows its reason.
const INTEGER_TYPES = new Set(["y", "n", "q", "i", "u", "x", "t", "h"]);

function renderSchema(domain, data, set, errorId) {
  const values = new Map(data.keys.map((entry) => [entry.key, entry]));
  const rows = data.schema.keys.map((key) => {
    const id = `schema-${key.key}`.replace(/[^A-Za-z0-9_-]/g, "_");
    const current = values.get(key.key);
    const forced = current?.forced ?? false;
    const text = current?.text ?? key.defaultText;
    const common = { id: `${id}-input`, "aria-label": key.summary || key.key, disabled: forced };
    let editor;
    if (key.range.type === "enum") {
      editor = element("select", { ...common, onchange: (event) => set(key.key, "string", event.target.value) },
        key.range.choices.map((choice) => element("option", { value: choice, selected: choice === text }, choice)));
    } else if (key.type === "b") {
      editor = element("input", { ...common, type: "checkbox", role: "switch", checked: text === "true",
        onchange: (event) => set(key.key, "bool", event.target.checked ? "true" : "false") });
    } else if (INTEGER_TYPES.has(key.type) || key.type === "d" || key.type === "s") {
      const numeric = key.type !== "s";
      const bounds = key.range.type === "range" ? { min: key.range.min, max: key.range.max } : {};
      editor = element("input", { ...common, type: numeric ? "number" : "text", step: key.type === "d" ? "any" : "1", ...bounds,
        value: text, oninput: (event) => { event.target.dataset.dirty = "true"; },
        onchange: (event) => { event.target.dataset.dirty = "false";
          set(key.key, key.type === "s" ? "string" : key.type === "d" ? "real" : "integer", event.target.value); } });
    } else {
      editor = element("span", { class: "detail key" }, text);
    }
    const limits = key.range.type === "range" ? words.range(key.range.min, key.range.max) : null;
    return element("div", { class: "row schema-key", id, "data-key": key.key, "data-type": key.type },
      element("span", { class: "title" }, key.summary || key.key),
      element("span", { class: "type" }, key.type),
      editor,
      current && !forced ? element("button", { class: "reset", type: "button", "aria-label": `${words.reset}: ${key.key}`,
        onclick: () => change(`/api/domains/${encodeURIComponent(domain)}/keys/delete`, { key: key.key }, errorId) }, words.reset)
        : element("span"),
      element("div", { class: "detail" }, [key.key, words.schemaDefault(key.defaultText), limits].filter(Boolean).join(" · ")),
      key.description ? element("div", { class: "detail description" }, key.description) : null,
      forced ? element("div", { class: "marks" }, words.administrator) : null);
  });
  return group(words.schema(data.schema.schema), null, rows);
}

// The arrays and dictionaries the Other domains editor shows now, by key: each is edited in
// place and sent whole. The tree's fields find their element through this map and a path of
// indices when they are used, never through what they captured when drawn: a field that
// keepFields kept across a re-render then still edits the value as it is now.
const plainTrees = new Map();

function nodeAt(key, path) {
  let node = plainTrees.get(key);
  for (const step of path) node = node.type === "array" ? node.items[step] : node.entries[step].value;
  return node;
}

// An array or a dictionary, element by element, to any depth: each element shows its index (or
// its key, editable), its type (which can be changed), its value (a field, a switch, or the
// elements of a nested container below it), and buttons to move (in an array) and remove it.
// Every change edits the tree in place and calls `send(key)`, which sends the whole value.
function renderTree(key, path, prefix, send, types) {
  const tree = nodeAt(key, path);
  const isArray = tree.type === "array";
  const list = isArray ? tree.items : tree.entries;
  const container = element("div", { class: "tree", id: `${prefix}-tree`, "data-type": tree.type });
  const parent = () => nodeAt(key, path);
  const elements = () => { const node = parent(); return node.type === "array" ? node.items : node.entries; };
  list.forEach((item, index) => {
    const here = [...path, index];
    const id = `${prefix}-${index}`;
    const node = isArray ? item : item.value;
    const replace = (fresh) => {
      const current = parent();
      if (current.type === "array") current.items[index] = fresh; else current.entries[index].value = fresh;
      send(key);
    };
    const label = isArray
      ? element("span", { class: "index" }, String(index))
      : element("input", { type: "text", class: "entry-key key", id: `${id}-key-input`, value: item.key, "aria-label": words.key,
          oninput: (event) => { event.target.dataset.dirty = "true"; },
          onchange: (event) => { event.target.dataset.dirty = "false"; parent().entries[index].key = event.target.value; send(key); } });
    const type = element("select", { class: "element-type", id: `${id}-type`, "aria-label": words.type,
      onchange: (event) => replace(emptyNode(event.target.value, nodeAt(key, here))) },
      types.map((name) => element("option", { value: name, selected: name === node.type }, name)));
    const nested = node.type === "array" || node.type === "dictionary";
    const value = nested
      ? element("span", { class: "detail" }, words.count((node.items ?? node.entries).length, node.type))
      : scalarField(node, `${id}-input`, (text) => { nodeAt(key, here).text = text; send(key); });
    const buttons = [];
    if (isArray) {
      const swap = (other) => { const list = elements(); [list[other], list[index]] = [list[index], list[other]]; send(key); };
      buttons.push(element("button", { type: "button", class: "up", "aria-label": words.moveUp, disabled: index === 0,
        onclick: () => swap(index - 1) }, "↑"));
      buttons.push(element("button", { type: "button", class: "down", "aria-label": words.moveDown, disabled: index === list.length - 1,
        onclick: () => swap(index + 1) }, "↓"));
    }
    buttons.push(element("button", { type: "button", class: "remove", "aria-label": words.remove,
      onclick: () => { elements().splice(index, 1); send(key); } }, "✕"));
    container.append(element("div", { class: "element", "data-path": here.join(".") }, label, type, value, ...buttons));
    if (nested) container.append(renderTree(key, here, id, send, types));
  });
  container.append(element("button", { type: "button", class: "add-element", id: `${prefix}-add`, onclick: () => {
    const current = parent();
    if (current.type === "array") current.items.push(emptyNode("string"));
    else {
      let name = "key", n = 1;
      while (current.entries.some((entry) => entry.key === name)) name = `key${++n}`;
      current.entries.push({ key: name, value: emptyNode("string") });
    }
    send(key);
  } }, isArray ? words.addElement : words.addEntry));
  return container;
}

// A scalar element's field: a switch for a boolean, else its text, committed through `commit`.
function scalarField(node, id, commit) {
  if (node.type === "bool") {
    return element("input", { type: "checkbox", role: "switch", id, checked: node.text === "true", "aria-label": node.type,
      onchange: (event) => commit(event.target.checked ? "true" : "false") });
  }
  return element("input", { type: "text", id, value: node.text, "aria-label": node.type,
    oninput: (event) => { event.target.dataset.dirty = "true"; },
    onchange: (event) => { event.target.dataset.dirty = "false"; commit(event.target.value); } });
}

// A new element of `type`: a scalar keeps the text it had when only its type changes (the
// server says so if that text is not of the new type), an empty one starts at the type's zero,
// a container starts empty.
function emptyNode(type, previous) {
  if (type === "array") return { type, items: [] };
  if (type === "dictionary") return { type, entries: [] };
  const start = { string: "", integer: "0", real: "0.0", bool: "false", date: new Date().toISOString().replace(/\.\d+Z$/, "Z"), data: "" };
  return { type, text: previous?.text ? previous.text : start[type] };
}

// ---------------------------------------------------------------- live

let refreshQueued = false;
function refreshSoon() {
  if (refreshQueued) return;
  refreshQueued = true;
  queueMicrotask(() => { refreshQueued = false; render(); });
}

// Whether the status line says the page lost the app (not the daemon): the page reconnects and re-renders.
let appUnreachable = false;
function showStatus(text) {
  statusLine.hidden = !text;
  statusLine.textContent = text ?? "";
}

function listen() {
  const socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${at("/live")}`);
  let wasReachable = null;
  socket.onmessage = (message) => {
    const notice = JSON.parse(message.data);
    if (notice.type === "daemon") {
      showStatus(notice.reachable ? null : words.daemonGone);
      if (notice.reachable && wasReachable === false) refreshSoon();
      wasReachable = notice.reachable;
    } else if (notice.type === "bundles") {
      refreshSoon();
    } else if (notice.type === "changed" && (watched.all || watched.domains.has(notice.domain))) {
      refreshSoon();
    }
  };
  socket.onclose = () => {
    appUnreachable = true;
    showStatus(words.appGone);
    setTimeout(listen, 1000);
  };
  socket.onopen = () => {
    if (!appUnreachable) return;
    appUnreachable = false;
    showStatus(null);
    refreshSoon();
  };
}

render();
listen();
