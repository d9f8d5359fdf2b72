// A domain's own views: an other domain's (a domain without a Settings bundle), its keys edited
// one by one, with its GSettings schema above them when it has one, and a form to add a key; and
// any domain's history, from defaultsd's change journal, with the note beside a row of when and
// by what its key last changed.

import { change, changesSent, getJSON, rowErrors, unlessStale } from "./api.js";
import { element, group, languageSelect, view } from "./dom.js";
import { watch } from "./live.js";
import { appPath, link, setHeader } from "./navigation.js";
import { renderSchema } from "./schema.js";
import { emptyNode, plainTrees, renderTree } from "./tree.js";
import { ago, words } from "./words.js";

export async function renderPlain(domain) {
  setHeader(domain, "/", words.settings);
  languageSelect.hidden = true;
  watch(false, new Set([domain]));
  const sent = changesSent;
  const data = await getJSON(`/api/domains/${encodeURIComponent(domain)}`);
  // The arrays and dictionaries being edited are replaced only by what the daemon held after
  // every change the page sent: one read before a change would take the change back at the next.
  unlessStale(sent);
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
    else if (entry.type === "boolean") {
      editor = element("input", { type: "checkbox", role: "switch", id: `${id}-input`, "aria-label": entry.key, checked: entry.text === "true",
        onchange: (event) => set(entry.key, "boolean", event.target.checked ? "true" : "false") });
    } else {
      editor = element("input", { type: "text", id: `${id}-input`, "aria-label": entry.key, value: entry.text,
        oninput: (event) => { event.target.dataset.dirty = "true"; },
        onchange: (event) => { event.target.dataset.dirty = "false"; set(entry.key, entry.type, event.target.value); } });
    }
    const lastChange = data.lastChanges?.[entry.key];
    return element("div", { class: "row", id, "data-key": entry.key, "data-type": entry.type },
      element("span", { class: "title key" }, entry.key), element("span", { class: "type" }, entry.type), editor,
      entry.forced ? element("div", { class: "marks" }, words.administrator) : null,
      entry.registered ? element("div", { class: "marks" }, words.appDefault) : null,
      entry.forced || entry.registered ? null : element("button", { class: "delete", type: "button", "aria-label": words.deleteKey(entry.key),
        onclick: () => change(`/api/domains/${encodeURIComponent(domain)}/keys/delete`, { key: entry.key }, errorId) }, words.delete),
      // Under the key's line, spanning the grid's columns.
      lastChange ? element("div", { class: "marks" }, changeNote(lastChange)) : null,
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

  // The history's row lies outside the editor's grid of key, type, value and actions.
  return element("div", {},
    element("div", { class: "plain", "data-domain": domain },
      data.schema ? renderSchema(domain, data, set, errorId) : null,
      group(words.keys, null, rows.length ? rows : [element("div", { class: "row disabled" }, element("span", { class: "title" }, words.noKeys))]),
      group(words.addKey, null, [form]),
      message),
    historyLink(domain));
}

// The note beside a row whose key the journal saw change: when, and by what ("changed 5 min ago
// by firefox"). A view is drawn again on each change of its domains, with the notes asked for
// again, so a note always tells of the latest change.
export function changeNote(last) {
  return element("span", { class: "last-change" }, words.lastChange(timeAgo(last.time), last.writer ?? ""));
}

// A time as how long ago it was, its date and hour in full on hover; kept current as time passes
// (keepTimesCurrent).
function timeAgo(time) {
  return element("time", { datetime: time, title: new Date(time).toLocaleString(document.documentElement.lang) }, ago(time));
}

// Each half minute, every time on show is worded again: "just now" becomes "1 min ago" without
// the view being drawn again.
export function keepTimesCurrent() {
  setInterval(() => {
    for (const time of view.querySelectorAll("time[datetime]")) time.textContent = ago(time.dateTime);
  }, 30_000);
}

// The row that opens a domain's history, at the end of its view.
export function historyLink(domain) {
  return group(null, null, [link(`/history/${encodeURIComponent(domain)}`, { class: "row link", id: "history-link" },
    element("span", { class: "title" }, words.history))]);
}

// A domain's history: the journal's entries, newest first, each with when and by what, the key,
// and its value before and after (a secure key's only that it changed), and a Restore that
// returns the key to the value the entry replaced. The view is drawn again on each change of the
// domain, so a Restore shows at the top as the change it made.
export async function renderHistory(domain) {
  languageSelect.hidden = true;
  watch(false, new Set([domain]));
  const data = await getJSON(`/api/domains/${encodeURIComponent(domain)}/history`);
  setHeader(words.history, data.bundle ? appPath(domain) : `/domains/${encodeURIComponent(domain)}`, data.title ?? domain);
  if (!data.journal) return element("p", { class: "empty", id: "journal-off" }, words.journalOff);
  const rows = data.entries.map((entry) => {
    const id = `history-${entry.id}-${entry.key}`.replace(/[^A-Za-z0-9_-]/g, "_");
    const before = shownValue(entry.old, words.notSet);
    // A secure key's earlier value was never recorded: there is nothing to restore.
    const restore = entry.secure ? null : element("button", { class: "restore", type: "button",
      "aria-label": words.restoreKey(entry.key, before),
      onclick: () => change(`/api/domains/${encodeURIComponent(domain)}/history/restore`, { to: entry.id, key: entry.key }, id) },
      words.restore);
    return element("div", { class: "row history-entry", id, "data-id": String(entry.id), "data-key": entry.key },
      element("span", { class: "title key" }, entry.key),
      element("span", { class: "change" }, entry.secure ? words.secureChanged : `${before} → ${shownValue(entry.new, words.removed)}`),
      restore,
      element("div", { class: "marks" }, timeAgo(entry.time), element("span", { class: "writer" }, words.byWriter(entry.writer ?? "")),
        entry.revert !== undefined ? element("span", { class: "restored" }, words.restored) : null),
      element("p", { class: "error", role: "alert" }, rowErrors.get(id) ?? ""));
  });
  return element("div", { class: "history", "data-domain": domain },
    group(null, data.entries.length === data.limit ? words.historyLimit(data.limit) : null,
      rows.length ? rows : [element("div", { class: "row disabled" }, element("span", { class: "title" }, words.noHistory))]));
}

// A value of the history as the plain editor shows it (its text), or what its absence means.
function shownValue(value, absent) {
  if (!value) return absent;
  return value.type === "string" && value.text === "" ? "\"\"" : value.text;
}
