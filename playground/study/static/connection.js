// The page's socket: it opens saying what the page has seen, reconnects by itself (with a
// capped backoff), and reads the server's close codes by name.
import { Close } from "./protocol.js";
import { showError } from "./dom.js";
import { state } from "./state.js";

const FIRST_RETRY = 500;
const LAST_RETRY = 5000;
let socket = null;
let retry = FIRST_RETRY;
let timer = null;

function socketUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${location.pathname.replace(/\/$/, "")}/ws`;
}

// `on` has: frame(data), closed(code) → "retry" | "now" | "stop".
export function connect(on) {
  clearTimeout(timer);
  const ws = new WebSocket(socketUrl());
  socket = ws;
  ws.onopen = () => {
    retry = FIRST_RETRY;
    ws.send(JSON.stringify({ type: "open", after: state.lastId, session: state.session }));
  };
  ws.onmessage = (event) => {
    let data;
    try { data = JSON.parse(event.data); } catch { return; }
    on.frame(data);
  };
  ws.onclose = (event) => {
    if (socket !== ws) return;
    socket = null;
    const next = on.closed(event.code);
    if (next === "now") connect(on);
    else if (next === "retry") {
      timer = setTimeout(() => connect(on), retry);
      retry = Math.min(retry * 2, LAST_RETRY);
    }
  };
}

export function connected() { return !!socket && socket.readyState === WebSocket.OPEN; }

export function send(payload) {
  if (!connected()) {
    showError("Not connected: what you sent was not delivered. Reconnecting…");
    return false;
  }
  socket.send(JSON.stringify(payload));
  return true;
}

// A frame about the conversation shown names it: the server refuses one about another.
export function sendAbout(payload) { return send({ ...payload, session: state.session }); }

export function hangUp() { if (connected()) socket.close(); }

export { Close };
