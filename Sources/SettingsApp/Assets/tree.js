// The tree editor: an array or a dictionary value of an other domain, element by element and to
// any depth, edited in place and handed back whole to be sent.

import { element } from "./dom.js";
import { words } from "./words.js";

// The arrays and dictionaries the Other domains editor shows now, by key: each is edited in
// place and sent whole. The tree's fields find their element through this map and a path of
// indices when they are used, never through what they captured when drawn: a field that
// keepFields (app.js) kept across a re-render then still edits the value as it is now.
export const plainTrees = new Map();

function nodeAt(key, path) {
  let node = plainTrees.get(key);
  for (const step of path) node = node.type === "array" ? node.items[step] : node.entries[step].value;
  return node;
}

// An array or a dictionary, element by element, to any depth: each element shows its index (or
// its key, editable), its type (which can be changed), its value (a field, a switch, or the
// elements of a nested container below it), and buttons to move (in an array) and remove it.
// Every change edits the tree in place and calls `send(key)`, which sends the whole value.
export function renderTree(key, path, prefix, send, types) {
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
  if (node.type === "boolean") {
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
export function emptyNode(type, previous) {
  if (type === "array") return { type, items: [] };
  if (type === "dictionary") return { type, entries: [] };
  const start = { string: "", integer: "0", real: "0.0", bool: "false", date: new Date().toISOString().replace(/\.\d+Z$/, "Z"), data: "" };
  return { type, text: previous?.text ? previous.text : start[type] };
}
