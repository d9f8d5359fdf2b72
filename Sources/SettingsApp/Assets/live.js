// Live updates: which domains the view on show depends on, the /live WebSocket that names the
// domains that changed (and whether the daemon is there), and the status line that says when
// the daemon or the app is gone.

import { at, statusLine } from "./dom.js";
import { render } from "./navigation.js";
import { words } from "./words.js";

// What the current view shows, to know which changes concern it.
let watched = { all: false, domains: new Set() };

// Each view names what it shows when it draws: `all` for the root, which lists every domain,
// else the domains its keys are kept in.
export function watch(all, domains = new Set()) {
  watched = { all, domains };
}

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

export function listen() {
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
