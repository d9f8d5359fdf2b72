// An app's view: the pane of its Settings bundle a link names, each row drawn as the control the
// bundle asks for, and a multi-value row's list of choices on its own.

import { change, getJSON, rowErrors } from "./api.js";
import { changeNote, historyLink } from "./domains.js";
import { at, element, group, languageSelect } from "./dom.js";
import { watch } from "./live.js";
import { appPath, link, navigate, setHeader } from "./navigation.js";
import { useLanguage, words } from "./words.js";

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

export async function renderApp(domain, query) {
  const language = query.get("language");
  const app = await getJSON(`/api/apps/${encodeURIComponent(domain)}${language ? `?language=${encodeURIComponent(language)}` : ""}`);
  watch(false, domainsOf(app.pane, domain));
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
  const notes = app.lastChanges ?? {};
  return element("div", { class: "pane", "data-file": pane.file }, heading,
    pane.sections.map((section) => group(section.title, section.footer, section.rows.map((row) => renderRow(domain, pane, row, keep, notes)))),
    pane === app.pane ? historyLink(domain) : null);
}

function languageName(code) {
  try {
    return new Intl.DisplayNames([code.replace("_", "-")], { type: "language" }).of(code.replace("_", "-")) ?? code;
  } catch { return code; }
}

/** A slider's value as a person reads it: whole numbers as they are, others to two places. */
function sliderText(value) { return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/0+$/, "").replace(/\.$/, ""); }

function rowId(pane, row) { return `row-${pane.file}-${row.index}`.replace(/[^A-Za-z0-9_-]/g, "_"); }

// `notes`: when and by what each key last changed, by domain then key.
function renderRow(domain, pane, row, keep, notes) {
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
  const lastChange = row.key ? notes[row.suite ?? domain]?.[row.key] : undefined;
  if (lastChange) marks.append(changeNote(lastChange));

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
      return element("div", attributes, title, element("span", { class: "detail" }, row.display), marks);
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
