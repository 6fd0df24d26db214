// The participant's page: the conversation live, a composer, and the person's private notes;
// once the conversation is over, the review message by message and, in a study plan, the
// questions about its agent and the end-of-study questions.
// Every piece of text from the server is set with textContent: nothing is ever parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  me: null, lastId: 0, people: new Map(), notes: new Map(), labels: new Set(),
  question: "", answers: [], typing: new Map(), socket: null, retry: 500,
  ended: false, cardFor: null, typingSent: 0, live: false,
  // The study protocol: where this person is ("talk", "review", "wait", "final", "done") and
  // what the page shows ("talk", "review", "questions", "wait", "final", "done", "closed").
  protocol: false, phase: "talk", view: "talk", study: null,
  reviewLabels: { wanted: {}, timings: {} }, questionnaire: null, final: null,
  thoughtsShown: false, thoughts: new Map(),
  messages: [], retro: new Map(), drafts: new Map(), reviewIndex: 0,
};

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function setStatus(text) { $("status").textContent = text; }

// Errors are shown next to the form in view; the conversation's own fade after a while.
const FORM_ERRORS = { review: "review-error", questions: "questions-error", final: "final-error" };

function showError(text) {
  if (FORM_ERRORS[state.view]) {
    if (state.view === "review") $("review-saved").textContent = "";
    $(FORM_ERRORS[state.view]).textContent = text;
    return;
  }
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
    if (event.code === 4001) {  // the study's next conversation begins: start afresh, at once
      nextConversation();
      return;
    }
    // After the end, a study page stays for the review: only "for good" stops it.
    if (event.code === 4000 || (state.ended && !state.protocol)) {
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
    case "ended":
      state.ended = true;
      if (!state.protocol) finish(`The conversation has ended. ${data.reason || ""}`);
      else if (state.phase === "talk") conversationOver(`The conversation has ended. ${data.reason || ""}`);
      else conversationOver(data.reason || "");
      return;
    case "phase":
      if (data.final) state.final = data.final;
      buildFinal();
      applyPhase(data.phase, false);
      return;
    case "retro": retroSaved(data.entry); return;
    case "answered": answered(data.what, data.answers); return;
    case "thought": addThought(data); return;
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
  state.protocol = typeof data.phase === "string";
  if (state.protocol) studyHello(data);
  if (data.status === "ended") {
    state.ended = true;
    if (!state.protocol) {
      finish("The conversation has ended.");
      return;
    }
    conversationOver("");
  }
  setStatus(state.me ? `Connected as ${state.me}` : "Connected");
  showComposer();
  if (state.protocol) applyPhase(data.phase, true);
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
  // Nothing can be saved any more: the forms go (a "thank you" stays).
  if (!["talk", "wait", "done"].includes(state.view)) setView("closed");
  else if (state.view === "talk" && !$("side").hidden) setView("closed");
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
  state.messages.push(m);
  const item = el("li", m.speaker === state.me ? "msg mine" : "msg");
  item.id = `m${m.id}`;
  item.dataset.id = String(m.id);
  const head = el("div");
  head.append(el("span", "who", m.speaker), el("span", "when", timeOf(m.at)));
  item.append(head, el("div", "text", m.text));
  for (const note of state.notes.get(m.id) || []) item.append(el("div", "mynote", noteText(note)));
  item.addEventListener("click", (event) => {
    if (event.target.closest("form")) return;
    if (state.view === "review") goToMessage(m.id);
    else openNote(item, m);
  });
  const list = $("messages");
  list.append(item);
  list.scrollTop = list.scrollHeight;  // the list only: a phone's page does not jump
  markReviewed(m.id);
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

// -- the study: phases and views ------------------------------------------------------------

function conversationOver(text) {
  if (text) banner(text);
  $("join").hidden = true;
  $("composer").hidden = true;
  $("card").hidden = true;
  for (const name of [...state.typing.keys()]) setTyping(name, false);
}

// Close code 4001: the study's next conversation begins. Everything of this one goes; the new
// one's hello brings what is needed.
function nextConversation() {
  for (const name of [...state.typing.keys()]) setTyping(name, false);
  Object.assign(state, {
    lastId: 0, people: new Map(), notes: new Map(), labels: new Set(), ended: false,
    cardFor: null, messages: [], retro: new Map(), drafts: new Map(), reviewIndex: 0,
    thoughts: new Map(), retry: 500,
  });
  $("messages").replaceChildren();
  $("thoughts-list").replaceChildren();
  $("people-list").replaceChildren();
  $("card").hidden = true;
  banner("");
  state.phase = "talk";
  setView("talk");
  setStatus("The next conversation is starting…");
  connect();
}

function studyHello(data) {
  saveDraft();
  state.study = data.study || null;
  state.reviewLabels = data.review || { wanted: {}, timings: {} };
  state.questionnaire = data.questionnaire || null;
  state.final = data.final || null;
  state.thoughtsShown = !!data.thoughts_shown;
  state.retro = new Map((data.retrospective || []).map((e) => [e.message_id, e]));
  const s = state.study;
  $("study").textContent = s ? `Conversation ${s.position} of ${s.of} · Topic: ${s.topic}` : "";
  $("study").hidden = !s;
  buildReviewChoices();
  buildQuestions();
  buildFinal();
  markReviewed();
}

// Where a phase takes the page. A reconnect keeps a review that was opened again.
function applyPhase(phase, reconnect) {
  const before = state.phase;
  state.phase = phase;
  if (phase !== "talk" && phase !== "review") banner("");
  let view = phase;
  if (phase === "review" && state.view === "questions") view = "questions";
  if (reconnect && before === phase && state.view === "review") view = "review";
  setView(view, view !== state.view && !(reconnect && before === phase));
}

const NOTES = {
  wait: ["Your answers are saved", "Thank you — please wait for the next conversation."],
  done: ["All done", "Thank you for taking part. You can close this page."],
};

function setView(view, focus) {
  if (state.view === "review" && view !== "review") saveDraft();
  const changed = view !== state.view;
  state.view = view;
  document.body.dataset.view = view;
  const shown = {
    "phase-note": view in NOTES,
    review: view === "review",
    rate: view === "review" && state.phase === "review" && !!state.questionnaire && !!state.me,
    questions: view === "questions",
    final: view === "final",
    thoughts: view === "talk" && state.thoughtsShown,
  };
  for (const [id, on] of Object.entries(shown)) $(id).hidden = !on;
  const side = Object.values(shown).some(Boolean);
  $("side").hidden = !side;
  $("main").classList.toggle("with-side", side);
  if (view in NOTES) {
    $("phase-title").textContent = NOTES[view][0];
    $("phase-text").textContent = NOTES[view][1];
    $("phase-review").hidden = !state.me || state.messages.length === 0;
  }
  if (view === "review") {
    $("review-close").hidden = state.phase === "review";
    $("review-close").textContent = state.phase === "final" ? "Back to the last questions" : "Close the review";
    renderReview();
  } else {
    highlight(null);
  }
  $("messages").classList.toggle("reviewing", view === "review");
  for (const id of Object.values(FORM_ERRORS)) $(id).textContent = "";
  if (changed) {
    $("side").scrollTop = 0;
    if (view !== "review") window.scrollTo(0, 0);  // a phone: the transcript is hidden then
  }
  const heading = { wait: "phase-title", done: "phase-title", review: "review-title",
    questions: "questions-title", final: "final-title" }[view];
  if (focus && heading) {  // a screen reader starts reading the new part of the page
    $(heading).tabIndex = -1;
    $(heading).focus({ preventScroll: true });
  }
}

// -- the review, message by message -----------------------------------------------------------

function choice(name, value, text, id) {
  const label = el("label", "choice");
  const input = el("input");
  input.type = "radio";
  input.name = name;
  input.value = value;
  input.id = id;
  label.append(input, el("span", "", text));
  return label;
}

function buildReviewChoices() {
  const { wanted, timings } = state.reviewLabels;
  $("r-wanted").replaceChildren(
    ...Object.entries(wanted).map(([key, text]) => choice("r-wanted", key, text, `r-wanted-${key}`)));
  $("r-timing").replaceChildren(
    ...Object.entries(timings).map(([key, text]) => choice("r-timing", key, text, `r-timing-${key}`)));
  if (state.view === "review") renderReview();
}

function currentMessage() {
  return state.messages[state.reviewIndex] || null;
}

function checked(name) {
  const input = document.querySelector(`input[name="${name}"]:checked`);
  return input ? input.value : null;
}

function setChecked(name, value) {
  for (const input of document.querySelectorAll(`input[name="${name}"]`)) {
    input.checked = value !== null && value !== undefined && input.value === String(value);
  }
}

function readReviewForm() {
  const timing = checked("r-timing");
  const after = $("r-after").value;
  return {
    thinking: $("r-thinking").value.trim(),
    wanted: checked("r-wanted"),
    why: $("r-why").value.trim(),
    timing,
    after_message_id: timing === "after" && after ? Number(after) : null,
  };
}

function sameEntry(a, b) {
  const norm = (e) => [e.thinking || "", e.wanted || null, e.why || "", e.timing || null,
    e.timing === "after" ? e.after_message_id ?? null : null].join("\u0000");
  return norm(a) === norm(b);
}

const BLANK = { thinking: "", wanted: null, why: "", timing: null, after_message_id: null };

// What is typed for a message and not saved yet stays when stepping to another one.
function saveDraft() {
  const m = currentMessage();
  if (!m || $("review").hidden || $("review-form").hidden) return;
  const entry = readReviewForm();
  if (sameEntry(entry, state.retro.get(m.id) || BLANK)) state.drafts.delete(m.id);
  else state.drafts.set(m.id, entry);
}

function shortText(m) {
  const text = m.text.replace(/\s+/g, " ").trim();
  const chars = [...text];
  return chars.length > 60 ? `${chars.slice(0, 60).join("")}…` : text;
}

function renderReview() {
  const count = state.messages.length;
  const none = count === 0 || !state.me;
  for (const id of ["review-form", "review-message"]) $(id).hidden = none;
  $("review-position").closest(".stepper").hidden = none;
  $("review-empty").hidden = !none;
  $("review-empty").textContent = state.me
    ? "There are no messages to look back at."
    : "You did not join this conversation, so there is nothing to look back at.";
  $("review-alone").hidden = none || !!state.questionnaire;
  if (none) return;
  state.reviewIndex = Math.max(0, Math.min(state.reviewIndex, count - 1));
  const m = currentMessage();
  $("review-position").textContent = `Message ${state.reviewIndex + 1} of ${count}`;
  $("review-prev").setAttribute("aria-disabled", String(state.reviewIndex === 0));
  $("review-next").setAttribute("aria-disabled", String(state.reviewIndex === count - 1));
  const head = el("div");
  head.append(el("span", "who", `#${m.id} ${m.speaker}`), el("span", "when", timeOf(m.at)));
  $("review-message").replaceChildren(head, el("div", "text", m.text));
  const entry = state.drafts.get(m.id) || state.retro.get(m.id) || BLANK;
  $("r-thinking").value = entry.thinking || "";
  $("r-why").value = entry.why || "";
  setChecked("r-wanted", entry.wanted);
  setChecked("r-timing", entry.timing);
  const later = state.messages.slice(state.reviewIndex + 1);
  $("r-after").replaceChildren(...later.map((n) => {
    const option = el("option", "", `#${n.id} ${n.speaker}: ${shortText(n)}`);
    option.value = String(n.id);
    return option;
  }));
  if (entry.after_message_id) $("r-after").value = String(entry.after_message_id);
  const after = $("r-timing-after");
  if (after) {
    after.disabled = later.length === 0;
    after.closest("label").classList.toggle("disabled", later.length === 0);
  }
  $("review-error").textContent = "";
  showAfter();
  showSaved();
  highlight(m.id);
}

function showAfter() {
  $("r-after-row").hidden = checked("r-timing") !== "after";
}

function showSaved() {
  const m = currentMessage();
  const saved = $("review-saved");
  if (!m) return;
  const draft = state.drafts.get(m.id);
  const pending = draft && !sameEntry(draft, state.retro.get(m.id) || BLANK);
  saved.textContent = pending ? "Not saved yet" : state.retro.has(m.id) ? "Saved" : "";
  saved.classList.toggle("pending", !!pending);
}

function highlight(id) {
  for (const item of $("messages").querySelectorAll(".msg.current")) {
    item.classList.remove("current");
    item.removeAttribute("aria-current");
  }
  if (id === null) return;
  const item = $(`m${id}`);
  if (!item) return;
  item.classList.add("current");
  item.setAttribute("aria-current", "true");
  const list = $("messages");
  const top = item.getBoundingClientRect().top - list.getBoundingClientRect().top + list.scrollTop;
  list.scrollTop = top - Math.max(0, (list.clientHeight - item.offsetHeight) / 2);
}

function step(by) {
  const to = state.reviewIndex + by;
  if (to < 0 || to >= state.messages.length) return;
  saveDraft();
  state.reviewIndex = to;
  renderReview();
}

function goToMessage(id) {
  const index = state.messages.findIndex((m) => m.id === id);
  if (index < 0 || index === state.reviewIndex) return;
  saveDraft();
  state.reviewIndex = index;
  renderReview();
}

function markReviewed(only) {
  const ids = only === undefined ? state.messages.map((m) => m.id) : [only];
  for (const id of ids) {
    const item = $(`m${id}`);
    if (!item) continue;
    const has = state.retro.has(id);
    const mark = item.querySelector(".retro-mark");
    if (has && !mark) item.firstElementChild.append(el("span", "retro-mark", "✓ noted"));
    else if (!has && mark) mark.remove();
  }
}

function saveRetro() {
  const m = currentMessage();
  if (!m) return;
  const entry = readReviewForm();
  $("review-error").textContent = "";
  if (!entry.thinking && !entry.why && !entry.wanted && !entry.timing) {
    $("review-error").textContent = "Nothing to save yet: answer at least one question.";
    return;
  }
  if (entry.timing === "after" && entry.after_message_id === null) {
    $("review-error").textContent = "After which message would you have spoken? Pick one.";
    return;
  }
  state.drafts.set(m.id, entry);
  if (send({ type: "retro", message_id: m.id, ...entry })) {
    $("review-saved").textContent = "Saving…";
    $("review-saved").classList.remove("pending");
  }
}

function retroSaved(entry) {
  state.retro.set(entry.message_id, entry);
  const draft = state.drafts.get(entry.message_id);
  if (draft && sameEntry(draft, entry)) state.drafts.delete(entry.message_id);
  markReviewed(entry.message_id);
  const m = currentMessage();
  if (state.view === "review" && m && m.id === entry.message_id) {
    if (!state.drafts.has(m.id)) renderReview();
    else showSaved();
  }
}

// -- the questions about the agent, and the end-of-study questions ------------------------------

function scaleLabel(name, n, id) {
  const label = el("label");
  const input = el("input");
  input.type = "radio";
  input.name = name;
  input.value = String(n);
  input.id = id;
  label.append(input, el("span", "", String(n)));
  if (n === 1) label.append(el("span", "sr-only", " (strongly disagree)"));
  if (n === 7) label.append(el("span", "sr-only", " (strongly agree)"));
  return label;
}

function readQuestions() {
  const answers = {};
  const q = state.questionnaire;
  if (!q) return answers;
  q.statements.forEach((s, i) => {
    const value = checked(`q-${i}`);
    if (value !== null) answers[s.key] = Number(value);
  });
  return answers;
}

function buildQuestions() {
  const list = $("questions-list");
  const typed = list.childElementCount ? readQuestions() : {};
  list.replaceChildren();
  const q = state.questionnaire;
  if (!q) return;
  $("rate-text").textContent = `When you have finished looking back, answer ${q.statements.length}`
    + ` short questions about ${q.agent}, the AI in this conversation.`;
  $("questions-text").textContent = `How much do you agree with each statement about ${q.agent},`
    + " the AI in this conversation? 1 means you strongly disagree, 7 that you strongly agree."
    + " Please answer all of them.";
  const values = { ...q.answers, ...typed };
  q.statements.forEach((s, i) => {
    const set = el("fieldset", "question");
    set.id = `q-${i}`;
    set.append(el("legend", "", `${i + 1}. ${s.statement}`));
    const scale = el("div", "scale");
    for (let n = 1; n <= 7; n += 1) scale.append(scaleLabel(`q-${i}`, n, `q-${i}-${n}`));
    const ends = el("div", "ends");
    ends.setAttribute("aria-hidden", "true");
    ends.append(el("span", "", "Strongly disagree"), el("span", "", "Strongly agree"));
    set.append(scale, ends);
    set.addEventListener("change", () => set.classList.remove("missing"));
    list.append(set);
    setChecked(`q-${i}`, values[s.key]);
  });
}

function numbers(list) {
  return list.length === 1 ? list[0] : `${list.slice(0, -1).join(", ")} and ${list.at(-1)}`;
}

function submitQuestions() {
  const q = state.questionnaire;
  if (!q) return;
  const answers = readQuestions();
  const missing = [];
  q.statements.forEach((s, i) => {
    const set = $(`q-${i}`);
    set.classList.toggle("missing", !(s.key in answers));
    if (!(s.key in answers)) missing.push(i + 1);
  });
  if (missing.length) {
    $("questions-error").textContent = missing.length === 1
      ? `Please answer every statement: number ${missing[0]} is not answered yet (marked in red).`
      : `Please answer every statement: numbers ${numbers(missing)} are not answered yet (marked in red).`;
    const first = document.querySelector(`input[name="q-${missing[0] - 1}"]`);
    if (first) first.focus();
    return;
  }
  $("questions-error").textContent = "";
  send({ type: "questionnaire", answers });
}

function readFinal() {
  const answers = {};
  const f = state.final;
  if (!f) return answers;
  f.agents.forEach((agent, i) => {
    const value = checked(`f-${i}`);
    if (value !== null) answers[`match:${agent}`] = value;
  });
  const favourite = checked("f-favourite");
  if (favourite !== null) answers.favourite = f.agents[Number(favourite)];
  return answers;
}

function buildFinal() {
  const list = $("final-list");
  const typed = list.childElementCount ? readFinal() : {};
  const f = state.final;
  list.replaceChildren();
  $("final-favourite-choices").replaceChildren();
  if (!f) return;
  const values = { ...f.answers, ...typed };
  f.agents.forEach((agent, i) => {
    const set = el("fieldset", "question");
    set.id = `f-${i}`;
    set.append(el("legend", "", `Which style did ${agent} have?`));
    const choices = el("div", "choices-column");
    f.styles.forEach((style, k) => {
      const label = el("label", "style-choice");
      const input = el("input");
      input.type = "radio";
      input.name = `f-${i}`;
      input.value = style.key;
      input.id = `f-${i}-${k}`;
      const text = el("span");
      text.append(el("strong", "", style.label), el("span", "description", style.description));
      label.append(input, text);
      choices.append(label);
    });
    set.append(choices);
    set.addEventListener("change", () => set.classList.remove("missing"));
    list.append(set);
    setChecked(`f-${i}`, values[`match:${agent}`]);
  });
  f.agents.forEach((agent, i) => {
    $("final-favourite-choices").append(choice("f-favourite", String(i), agent, `f-favourite-${i}`));
  });
  const favourite = f.agents.indexOf(values.favourite);
  setChecked("f-favourite", favourite >= 0 ? favourite : null);
}

function submitFinal() {
  const f = state.final;
  if (!f) return;
  const answers = readFinal();
  const missing = [];
  f.agents.forEach((agent, i) => {
    const set = $(`f-${i}`);
    set.classList.toggle("missing", !(`match:${agent}` in answers));
    if (!(`match:${agent}` in answers)) missing.push(agent);
  });
  $("final-favourite").classList.toggle("missing", !answers.favourite);
  const problems = [];
  if (missing.length) problems.push(`pick a style for ${numbers(missing)}`);
  if (!answers.favourite) problems.push("pick the AI you liked best");
  if (problems.length) {
    $("final-error").textContent = `Please ${problems.join(", and ")} (marked in red).`;
    const first = document.querySelector("#final .missing input");
    if (first) first.focus();
    return;
  }
  $("final-error").textContent = "";
  send({ type: "final", answers });
}

function answered(what, answers) {
  if (what === "questionnaire" && state.questionnaire) state.questionnaire.answers = answers;
  if (what === "final" && state.final) state.final.answers = answers;
}

// -- the agents' thoughts (a study condition) ---------------------------------------------------

function addThought(t) {
  const key = `${t.name}\u0000${t.id}`;
  const known = state.thoughts.get(key);
  const motivation = t.motivation ?? (known ? known.motivation : null);
  const item = known ? known.item : el("li", "thought");
  const side = $("side");
  const atEnd = side.scrollHeight - side.scrollTop - side.clientHeight < 40;
  state.thoughts.set(key, { item, motivation });
  item.replaceChildren(el("span", "who", t.name), el("span", "text", t.text));
  if (motivation !== null && motivation !== undefined) {
    item.append(el("span", "motivation", `Motivation to say it: ${Number(motivation).toFixed(1)} of 5`));
  }
  if (!known) $("thoughts-list").append(item);
  if (!known || atEnd) side.scrollTop = side.scrollHeight;  // follows the newest, unless scrolled up
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
$("review-prev").addEventListener("click", () => step(-1));
$("review-next").addEventListener("click", () => step(1));
$("review-form").addEventListener("submit", (event) => { event.preventDefault(); saveRetro(); });
$("review-form").addEventListener("input", () => { saveDraft(); showSaved(); });
$("review-form").addEventListener("change", () => { showAfter(); saveDraft(); showSaved(); });
$("review-close").addEventListener("click", () => setView(state.phase, true));
$("phase-review").addEventListener("click", () => setView("review", true));
$("final-review").addEventListener("click", () => setView("review", true));
$("rate-open").addEventListener("click", () => setView("questions", true));
$("questions-back").addEventListener("click", () => setView("review", true));
$("questions-form").addEventListener("submit", (event) => { event.preventDefault(); submitQuestions(); });
$("final-form").addEventListener("submit", (event) => { event.preventDefault(); submitFinal(); });

connect();
