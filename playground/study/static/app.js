// The participant's page: the conversation live, a composer, and the person's private notes.
// Every piece of text from the server is set with textContent: nothing is ever parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  me: null, lastId: 0, people: new Map(), notes: new Map(), labels: new Set(),
  question: "", answers: [], typing: new Map(), socket: null, retry: 500,
  ended: false, cardFor: null, typingSent: 0, live: false,
};

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function setStatus(text) { $("status").textContent = text; }

function showError(text) {
  $("error").textContent = text;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { $("error").textContent = ""; }, 8000);
}

function banner(text) {
  $("banner").textContent = text;
  $("banner").hidden = !text;
}

function socketUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${location.pathname.replace(/\/$/, "")}/ws`;
}

function connect() {
  const socket = new WebSocket(socketUrl());
  state.socket = socket;
  socket.onopen = () => {
    state.retry = 500;
    socket.send(JSON.stringify({ after: state.lastId }));
  };
  socket.onmessage = (event) => {
    let data;
    try { data = JSON.parse(event.data); } catch { return; }
    handle(data);
  };
  socket.onclose = (event) => {
    state.live = false;
    if (state.socket !== socket) return;
    if (event.code === 4000 || state.ended) {
      finish(state.ended ? null : "This conversation is closed.");
      return;
    }
    setStatus("Connection lost, reconnecting…");
    setTimeout(connect, state.retry);
    state.retry = Math.min(state.retry * 2, 8000);
  };
}

function send(payload) {
  if (!state.socket || state.socket.readyState !== WebSocket.OPEN) {
    showError("Not connected: what you sent was not delivered. Reconnecting…");
    return false;
  }
  state.socket.send(JSON.stringify(payload));
  return true;
}

function handle(data) {
  switch (data.type) {
    case "hello": return hello(data);
    case "message": addMessage(data.message, true); return;
    case "joined": state.people.set(data.person.name, data.person); renderPeople(); return;
    case "left": state.people.delete(data.name); renderPeople(); return;
    case "presence": {
      const person = state.people.get(data.name);
      if (person) { person.online = data.online; renderPeople(); }
      return;
    }
    case "typing": setTyping(data.name, data.on); return;
    case "you": state.me = data.name; showComposer(); return;
    case "note": addNote(data.note); return;
    case "label": state.labels.add(data.label.message_id); return;
    case "error": showError(data.message); return;
    case "revoked": state.ended = true; finish("Your invitation was withdrawn by the researcher."); return;
    case "ended": state.ended = true; finish(`The conversation has ended. ${data.reason || ""}`); return;
    default: return;
  }
}

function hello(data) {
  state.live = true;
  state.me = data.you;
  state.question = data.question;
  state.answers = data.answers;
  state.people = new Map(data.participants.map((p) => [p.name, p]));
  renderPeople();
  for (const m of data.messages) addMessage(m, false);
  for (const n of data.notes) addNote(n);
  for (const l of data.labels) state.labels.add(l.message_id);
  if (data.status === "ended") {
    state.ended = true;
    finish("The conversation has ended.");
    return;
  }
  setStatus(state.me ? `Connected as ${state.me}` : "Connected");
  showComposer();
}

function showComposer() {
  $("join").hidden = !!state.me || state.ended;
  $("composer").hidden = !state.me || state.ended;
  if (state.me) setStatus(`Connected as ${state.me}`);
  if (!$("composer").hidden) $("text").focus();
  else if (!$("join").hidden) $("join-name").focus();
}

function finish(text) {
  setStatus("Ended");
  if (text) banner(text);
  $("join").hidden = true;
  $("composer").hidden = true;
  $("card").hidden = true;
  if (state.socket && state.socket.readyState === WebSocket.OPEN) state.socket.close();
}

function renderPeople() {
  const list = $("people-list");
  list.replaceChildren();
  for (const p of state.people.values()) {
    const item = el("li");
    const dot = el("span", p.kind === "human" && p.remote && !p.online ? "dot" : "dot on");
    item.append(dot, el("span", "", p.name));
    const kind = p.kind === "human" ? (p.name === state.me ? " (you)" : "") : " · agent";
    if (kind) item.append(el("span", "kind", kind));
    list.append(item);
  }
}

function timeOf(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function addMessage(m, live) {
  if (m.id <= state.lastId) return;  // already shown (a reconnect's catch-up)
  state.lastId = m.id;
  const item = el("li", m.speaker === state.me ? "msg mine" : "msg");
  item.id = `m${m.id}`;
  item.dataset.id = String(m.id);
  const head = el("div");
  head.append(el("span", "who", m.speaker), el("span", "when", timeOf(m.at)));
  item.append(head, el("div", "text", m.text));
  for (const note of state.notes.get(m.id) || []) item.append(el("div", "mynote", noteText(note)));
  item.addEventListener("click", (event) => {
    if (event.target.closest("form")) return;
    openNote(item, m);
  });
  $("messages").append(item);
  item.scrollIntoView({ block: "end" });
  setTyping(m.speaker, false);
  if (live && state.me && m.kind === "ai" && !state.labels.has(m.id)) ask(m);
  else if (m.speaker === state.me) $("card").hidden = true;
}

function noteText(note) {
  return `${note.kind === "reason" ? "Your reason" : "Your reaction"} (private): ${note.text}`;
}

function addNote(note) {
  const list = state.notes.get(note.message_id) || [];
  if (list.some((n) => n.text === note.text && n.kind === note.kind)) return;
  list.push(note);
  state.notes.set(note.message_id, list);
  const item = $(`m${note.message_id}`);
  if (item) item.append(el("div", "mynote", noteText(note)));
}

function openNote(item, m) {
  if (!state.me || state.ended || item.querySelector("form")) return;
  const form = $("note-form").content.firstElementChild.cloneNode(true);
  const mine = m.speaker === state.me;
  form.querySelector("label").textContent = mine
    ? "Why did you say this? (private: only the researcher sees it)"
    : `How did you react to ${m.speaker}'s message? (private: only the researcher sees it)`;
  const input = form.querySelector("input");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text && send({ type: "note", message_id: m.id, text })) form.remove();
  });
  item.append(form);
  input.focus();
}

function ask(m) {
  state.cardFor = m.id;
  $("card-question").textContent = state.question.replace("{speaker}", m.speaker);
  const answers = $("card-answers");
  answers.replaceChildren();
  for (const answer of state.answers) {
    const button = el("button", "", answer);
    button.type = "button";
    button.addEventListener("click", () => {
      if (send({ type: "label", message_id: m.id, answer })) state.labels.add(m.id);
      $("card").hidden = true;
    });
    answers.append(button);
  }
  $("card").hidden = false;
}

function setTyping(name, on) {
  clearTimeout(state.typing.get(name));
  state.typing.delete(name);
  if (on && name !== state.me) {
    // A person's typing is passed on at most once a second: it lapses unless renewed.
    state.typing.set(name, setTimeout(() => setTyping(name, false), 6000));
  }
  const names = [...state.typing.keys()];
  $("typing").textContent = names.length === 0 ? ""
    : names.length === 1 ? `${names[0]} is typing…`
    : `${names.slice(0, -1).join(", ")} and ${names.at(-1)} are typing…`;
}

function sendMessage() {
  const text = $("text").value.trim();
  if (!text) return;
  if (send({ type: "say", text })) $("text").value = "";
}

$("composer").addEventListener("submit", (event) => { event.preventDefault(); sendMessage(); });
$("text").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    sendMessage();
  }
});
$("text").addEventListener("input", () => {
  const now = Date.now();
  if (now - state.typingSent > 1500 && state.socket && state.socket.readyState === WebSocket.OPEN) {
    state.typingSent = now;
    state.socket.send(JSON.stringify({ type: "typing" }));
  }
});
$("join").addEventListener("submit", (event) => {
  event.preventDefault();
  const name = $("join-name").value.trim();
  if (name) send({ type: "join", name });
});
$("card-close").addEventListener("click", () => { $("card").hidden = true; });

connect();
