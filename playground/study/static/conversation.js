// The conversation live: the people bar, the messages, who is typing, the composer, and (a
// study condition) the agents' thoughts.
import { $, agentTag, el, isAgent, showError, timeOf } from "./dom.js";
import { connected, send } from "./connection.js";
import { addNote, ask, noteText, openNote } from "./notes.js";
import { goToMessage, markReviewed } from "./review.js";
import { Page, state } from "./state.js";

// From how many characters the composer shows how many are left.
const COUNTER_MARGIN = 200;
// How long a sent message may go unconfirmed before the composer lets the person send again
// (its text is still there: nothing is lost either way).
const UNCONFIRMED_MS = 15000;
let unconfirmed = null;

export function renderPeople() {
  const list = $("people-list");
  list.replaceChildren();
  for (const p of state.people.values()) {
    const item = el("li");
    const dot = el("span", p.kind === "human" && p.remote && !p.online ? "dot" : "dot on");
    item.append(dot, el("span", "", p.name));
    if (isAgent(p.kind)) item.append(" ", agentTag());
    else if (p.name === state.me) item.append(el("span", "kind", " (you)"));
    list.append(item);
  }
}

export function addMessage(m, live) {
  if (m.id <= state.lastId) return;  // already shown (a reconnect's catch-up)
  state.lastId = m.id;
  state.messages.push(m);
  const item = el("li", m.speaker === state.me ? "msg mine" : "msg");
  item.id = `m${m.id}`;
  item.dataset.id = String(m.id);
  item.dataset.kind = m.kind;
  const head = el("div");
  head.append(el("span", "who", m.speaker));
  if (isAgent(m.kind)) head.append(agentTag());
  head.append(el("span", "when", timeOf(m.at)));
  item.append(head, el("div", "text", m.text));
  for (const note of state.notes.get(m.id) || []) item.append(el("div", "mynote", noteText(note)));
  item.addEventListener("click", (event) => {
    if (event.target.closest("form")) return;
    if (state.page === Page.REVIEW) goToMessage(m.id);
    else openNote(item, m);
  });
  const list = $("messages");
  const atEnd = !follow.watching || followedEnd(list);
  list.append(item);
  // The list only (a phone's page does not jump), and only when the person was at its end or
  // wrote the message: someone who scrolled up to read stays where they are.
  if (atEnd || m.speaker === state.me) {
    list.scrollTop = list.scrollHeight;
    follow.atEnd = true;
  }
  followEnd(list);
  markReviewed(m.id);
  setTyping(m.speaker, false);
  if (live && state.me && m.kind === "ai" && !state.labels.has(m.id)) ask(m);
  else if (m.speaker === state.me) $("card").hidden = true;
  if (m.speaker === state.me) delivered(m.text);
}

export { addNote };

// Whether the message list is at its end, as the person left it. A list that was at its end stays
// there when it changes size (the one-click question or the composer appears below it, a phone
// turns or its keyboard opens, narrower lines wrap), so its last message is never hidden. Only a
// scroll at an unchanged size is the person's: one read mid-layout would see the list cut short.
const follow = { watching: false, atEnd: true, height: 0, width: 0 };

// At a message's arrival: the list's end as the person left it, read now when the list has its
// size (the scroll event that tells it may not have arrived yet on a busy machine).
function followedEnd(list) {
  if (list.clientHeight !== follow.height || list.clientWidth !== follow.width) return follow.atEnd;
  return list.scrollHeight - list.scrollTop - list.clientHeight < 40;
}

function followEnd(list) {
  if (follow.watching) return;
  follow.watching = true;
  follow.height = list.clientHeight;
  follow.width = list.clientWidth;
  list.addEventListener("scroll", () => {
    if (list.clientHeight !== follow.height || list.clientWidth !== follow.width) return;
    follow.atEnd = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  });
  new ResizeObserver(() => {
    follow.height = list.clientHeight;
    follow.width = list.clientWidth;
    if (follow.atEnd) list.scrollTop = list.scrollHeight;
  }).observe(list);
}

export function setTyping(name, on) {
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

export function stopTyping() {
  for (const name of [...state.typing.keys()]) setTyping(name, false);
}

// The conversation's parts of the page, emptied for another conversation.
export function clearConversation() {
  stopTyping();
  $("messages").replaceChildren();
  $("thoughts-list").replaceChildren();
  $("people-list").replaceChildren();
  $("card").hidden = true;
}

// -- the composer: what is typed stays until the server has the message -----------------------

export function sendMessage() {
  const text = $("text").value.trim();
  if (!text || state.pending !== null) return;
  if (!send({ type: "say", text })) return;
  state.pending = text;
  clearTimeout(unconfirmed);
  unconfirmed = setTimeout(() => { if (state.pending === text) state.pending = null; }, UNCONFIRMED_MS);
}

// The person's own message came back: it is saved, so the composer lets go of its text.
function delivered(text) {
  if (state.pending === null || state.pending !== text) return;
  state.pending = null;
  clearTimeout(unconfirmed);
  const typed = $("text").value;
  if (typed.trim() === text) $("text").value = "";
  else if (typed.startsWith(text)) $("text").value = typed.slice(text.length).trimStart();
  updateCounter();
}

// A refused message (too long, too many): the text stays in the composer to send again.
export function refused() {
  state.pending = null;
  clearTimeout(unconfirmed);
}

export function updateCounter() {
  const limit = state.limits.text;
  const used = [...$("text").value].length;
  const counter = $("count");
  counter.hidden = used < limit - COUNTER_MARGIN;
  counter.textContent = `${used} / ${limit}`;
  counter.classList.toggle("over", used > limit);
}

export function typed() {
  updateCounter();
  const now = Date.now();
  if (now - state.typingSent > 1500 && connected()) {
    state.typingSent = now;
    send({ type: "typing" });
  }
}

// -- the agents' thoughts (a study condition) ---------------------------------------------------

export function addThought(t) {
  const key = `${t.name}\u0000${t.id}`;
  const known = state.thoughts.get(key);
  const motivation = t.motivation ?? (known ? known.motivation : null);
  const item = known ? known.item : el("li", "thought");
  const side = $("side");
  const atEnd = side.scrollHeight - side.scrollTop - side.clientHeight < 40;
  state.thoughts.set(key, { item, motivation });
  item.replaceChildren(el("span", "who", t.name), agentTag(), el("span", "text", t.text));
  if (motivation !== null && motivation !== undefined) {
    item.append(el("span", "motivation", `Motivation to say it: ${Number(motivation).toFixed(1)} of 5`));
  }
  if (!known) $("thoughts-list").append(item);
  if (!known || atEnd) side.scrollTop = side.scrollHeight;  // follows the newest, unless scrolled up
}

export { showError };
