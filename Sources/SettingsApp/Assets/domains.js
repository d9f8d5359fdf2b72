// An other domain's view (a domain without a Settings bundle): its keys edited one by one, with
// its GSettings schema above them when it has one, and a form to add a key.

import { change, getJSON, rowErrors } from "./api.js";
import { element, group, languageSelect } from "./dom.js";
import { watch } from "./live.js";
import { setHeader } from "./navigation.js";
import { renderSchema } from "./schema.js";
import { emptyNode, plainTrees, renderTree } from "./tree.js";
import { words } from "./words.js";

export async function renderPlain(domain) {
  setHeader(domain, "/", words.settings);
  languageSelect.hidden = true;
  watch(false, new Set([domain]));
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
    else if (entry.type === "boolean") {
      editor = element("input", { type: "checkbox", role: "switch", id: `${id}-input`, "aria-label": entry.key, checked: entry.text === "true",
        onchange: (event) => set(entry.key, "boolean", event.target.checked ? "true" : "false") });
    } else {
      editor = element("input", { type: "text", id: `${id}-input`, "aria-label": entry.key, value: entry.text,
        oninput: (event) => { event.target.dataset.dirty = "true"; },
        onchange: (event) => { event.target.dataset.dirty = "false"; set(entry.key, entry.type, event.target.value); } });
    }
    return element("div", { class: "row", id, "data-key": entry.key, "data-type": entry.type },
      element("span", { class: "title key" }, entry.key), element("span", { class: "type" }, entry.type), editor,
      entry.forced ? element("div", { class: "marks" }, words.administrator) : null,
      entry.registered ? element("div", { class: "marks" }, words.appDefault) : null,
      entry.forced || entry.registered ? null : element("button", { class: "delete", type: "button", "aria-label": words.deleteKey(entry.key),
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
