// The GSettings schema of a domain that GSettings programs keep here, as dconf-editor shows it:
// each key of its schema with its summary, description, type, default and range or choices,
// edited with the control its type calls for. The app checks each value against the schema
// before it writes it, and a refusal shows its reason.

import { change } from "./api.js";
import { element, group } from "./dom.js";
import { words } from "./words.js";

const INTEGER_TYPES = new Set(["y", "n", "q", "i", "u", "x", "t", "h"]);

export function renderSchema(domain, data, set, errorId) {
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
        onchange: (event) => set(key.key, "boolean", event.target.checked ? "true" : "false") });
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
