// The app's own words, in English and French, which of them are in use, and how long ago a time
// was in them ("5 min ago"). A pane's words
// follow the pane's language (the bundle's .lproj chosen for the browser, or picked in the
// header); every other view follows the browser's languages. The daemon's messages come as the
// daemon words them.

import { languageSelect } from "./dom.js";

const WORDS = {
  en: {
    settings: "Settings", search: "Search", searchLabel: "Search settings", results: "Results", noResults: "No results",
    apps: "Apps", noBundles: "No Settings bundles installed", otherDomains: "Other domains",
    otherDomainsFooter: "Domains without a Settings bundle, edited key by key.", none: "None", noPanes: "This bundle has no panes.",
    administrator: "Set by your administrator", appDefault: "The app's default", changed: "Changed", reset: "Reset to default",
    secureSet: "Set — type to replace", secureUnset: "Not set", secureValue: "Secure value, set",
    delete: "Delete", deleteKey: (key) => `Delete ${key}`, key: "Key", newKey: "New key", type: "Type", value: "Value", add: "Add",
    keys: "Keys", noKeys: "No keys", addKey: "Add a key", language: "Language",
    schema: (id) => `GSettings schema ${id}`, schemaDefault: (text) => `default: ${text}`, range: (min, max) => `${min} to ${max}`,
    addElement: "Add an element", addEntry: "Add an entry", moveUp: "Move up", moveDown: "Move down", remove: "Remove",
    count: (n, type) => type === "array" ? `${n} ${n === 1 ? "element" : "elements"}` : `${n} ${n === 1 ? "entry" : "entries"}`,
    daemonGone: "defaultsd is not running; waiting for it to come back…", appGone: "The Settings app is not reachable; reconnecting…",
    lastChange: (when, writer) => ["changed ", when, ` by ${writer}`], byWriter: (writer) => `by ${writer}`,
    justNow: "just now", minutesAgo: (n) => `${n} min ago`, hoursAgo: (n) => `${n} h ago`, onDate: (date) => `on ${date}`,
    history: "History", journalOff: "The change journal is off for this domain", noHistory: "No changes recorded",
    historyLimit: (n) => `The newest ${n} changes.`, notSet: "not set", removed: "removed", secureChanged: "secure value changed",
    restore: "Restore", restoreKey: (key, value) => `Restore ${key} to ${value}`, restored: "restored",
  },
  fr: {
    settings: "Réglages", search: "Rechercher", searchLabel: "Rechercher dans les réglages", results: "Résultats", noResults: "Aucun résultat",
    apps: "Apps", noBundles: "Aucun bundle de réglages installé", otherDomains: "Autres domaines",
    otherDomainsFooter: "Domaines sans bundle de réglages, modifiés clé par clé.", none: "Aucun", noPanes: "Ce bundle n’a aucune page.",
    administrator: "Défini par votre administrateur", appDefault: "Valeur par défaut de l'app", changed: "Modifié", reset: "Rétablir la valeur par défaut",
    secureSet: "Défini — tapez pour remplacer", secureUnset: "Non défini", secureValue: "Valeur protégée, définie",
    delete: "Supprimer", deleteKey: (key) => `Supprimer ${key}`, key: "Clé", newKey: "Nouvelle clé", type: "Type", value: "Valeur", add: "Ajouter",
    keys: "Clés", noKeys: "Aucune clé", addKey: "Ajouter une clé", language: "Langue",
    schema: (id) => `Schéma GSettings ${id}`, schemaDefault: (text) => `par défaut : ${text}`, range: (min, max) => `de ${min} à ${max}`,
    addElement: "Ajouter un élément", addEntry: "Ajouter une entrée", moveUp: "Monter", moveDown: "Descendre", remove: "Retirer",
    count: (n, type) => type === "array" ? `${n} ${n === 1 ? "élément" : "éléments"}` : `${n} ${n === 1 ? "entrée" : "entrées"}`,
    daemonGone: "defaultsd ne tourne pas ; en attente de son retour…", appGone: "L’app Réglages est injoignable ; reconnexion…",
    lastChange: (when, writer) => ["modifié ", when, ` par ${writer}`], byWriter: (writer) => `par ${writer}`,
    justNow: "à l’instant", minutesAgo: (n) => `il y a ${n} min`, hoursAgo: (n) => `il y a ${n} h`, onDate: (date) => `le ${date}`,
    history: "Historique", journalOff: "Le journal des modifications est désactivé pour ce domaine", noHistory: "Aucune modification enregistrée",
    historyLimit: (n) => `Les ${n} modifications les plus récentes.`, notSet: "non défini", removed: "supprimé",
    secureChanged: "valeur protégée modifiée",
    restore: "Restaurer", restoreKey: (key, value) => `Restaurer ${key} à ${value}`, restored: "restauré",
  },
};
// Every module's import of `words` follows each `useLanguage`; a copy taken from it would not.
export let words = WORDS.en;

/** The app's words for the first of `tags` it has (`fr-CA` → French), else English. */
export function useLanguage(tags) {
  const chosen = tags.map((tag) => String(tag).toLowerCase().replace("_", "-").split("-")[0]).find((language) => language in WORDS) ?? "en";
  words = WORDS[chosen];
  document.documentElement.lang = chosen;
  languageSelect.setAttribute("aria-label", words.language);
}

/** How long ago `time` (RFC 3339) was, in the words in use: "just now", "5 min ago", "3 h ago",
 * then its date ("on 27 Nov 2026"). */
export function ago(time, now = Date.now()) {
  const seconds = Math.max(0, (now - Date.parse(time)) / 1000);
  if (seconds < 60) return words.justNow;
  if (seconds < 3600) return words.minutesAgo(Math.floor(seconds / 60));
  if (seconds < 86400) return words.hoursAgo(Math.floor(seconds / 3600));
  return words.onDate(new Date(time).toLocaleDateString(document.documentElement.lang, { dateStyle: "medium" }));
}
