// The page's fixed parts and the making of elements: the address prefix, the header, the view
// and the status line as index.html has them, and `element` and `group`, which every view uses.

// Every address of the app lies under a secret path prefix (its session cookie is sent only
// there); the server puts it in data-base. The code speaks of paths without it ("/apps/…"),
// and `at` adds it.
export const base = document.documentElement.dataset.base;
export const at = (path) => base + path;

export const view = document.getElementById("view");
export const titleElement = document.getElementById("title");
export const back = document.getElementById("back");
export const backTitle = document.getElementById("back-title");
export const languageSelect = document.getElementById("language");
export const statusLine = document.getElementById("status");

export function element(tag, attributes = {}, ...children) {
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

export function group(title, footer, rows, attributes = {}) {
  return element("section", { class: "group", ...attributes },
    title ? element("h2", {}, title) : null,
    element("div", { class: "rows" }, rows),
    footer ? element("p", { class: "footer" }, footer) : null);
}
