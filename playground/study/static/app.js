// The participant's page: the conversation live, a composer, and the person's private notes;
// once the conversation is over, the review message by message and, in a study plan, the
// questions about its agent and the end-of-study questions.
//
// The page's parts are ES modules (no build step): connection (the socket), conversation (people,
// messages, composer, thoughts), notes, review, questions; state holds the one explicit Page
// state; protocol is generated from the server's definition of the frames. This module wires
// them: it reads each frame the server sends and decides what the page shows.
import { Close, connect, hangUp, send } from "./connection.js";
import {
  addMessage, addNote, addThought, clearConversation, refused, renderPeople, sendMessage,
  setTyping, stopTyping, typed, updateCounter,
} from "./conversation.js";
import { $, banner, FORM_ERRORS, setStatus, showError } from "./dom.js";
import { answered, buildFinal, buildQuestions, submitFinal, submitQuestions } from "./questions.js";
import {
  buildReviewChoices, highlight, markReviewed, renderReview, retroSaved, saveDraft, saveRetro,
  showAfter, showSaved, step,
} from "./review.js";
import { conversationOver, forgetConversation, Page, state } from "./state.js";

const PAUSED = "The study is paused; this page will continue by itself.";

function handle(data) {
  switch (data.type) {
    case "hello": return hello(data);
    case "message": return addMessage(data.message, true);
    case "joined": state.people.set(data.person.name, data.person); return renderPeople();
    case "left": state.people.delete(data.name); return renderPeople();
    case "presence": {
      const person = state.people.get(data.name);
      if (person) { person.online = data.online; renderPeople(); }
      return;
    }
    case "typing": return setTyping(data.name, data.on);
    case "you": state.me = data.name; renderPeople(); return showComposer();
    case "note": return addNote(data.note);
    case "label": state.labels.add(data.label.message_id); return;
    case "error":
      if (data.refused === "say") refused();
      return showError(data.message);
    case "ended": return ended(data);
    case "paused": return paused(data.reason);
    case "revoked": return closeForGood("Your invitation was withdrawn by the researcher.");
    case "pages": return pages(data.count);
    case "phase":
      if (data.final) state.final = data.final;
      buildFinal();
      return applyPhase(data.phase, false);
    case "retro": return retroSaved(data.entry);
    case "answered": return answered(data.what, data.answers);
    case "thought": return addThought(data);
    default: return;  // a kind this page does not know: nothing to show
  }
}

function hello(data) {
  if (state.session !== null && data.session !== state.session) {
    // The link's conversation changed (the study's next one, or the same one run again after a
    // crash): nothing of the old one may stay, or notes would land on the wrong messages.
    saveDraft();
    forgetConversation();
    clearConversation();
    banner("");
  }
  state.session = data.session;
  state.me = data.you;
  state.question = data.question;
  state.answers = data.answers;
  state.limits = data.limits;
  state.status = data.status;
  state.people = new Map(data.participants.map((p) => [p.name, p]));
  renderPeople();
  for (const m of data.messages) addMessage(m, false);
  for (const n of data.notes) addNote(n);
  for (const l of data.labels) state.labels.add(l.message_id);
  state.pending = null;  // what was sent before the drop is in the catch-up, or was not saved
  studyHello(data);
  pages(data.pages);
  if (state.page === Page.PAUSED) banner("");
  if (data.status === "ended") conversationEnded("");
  setStatus(state.me ? `Connected as ${state.me}` : "Connected");
  applyPhase(data.phase, true);
  showComposer();
  updateCounter();
}

function studyHello(data) {
  saveDraft();
  state.study = data.study;
  state.reviewLabels = data.review;
  state.questionnaire = data.questionnaire;
  state.final = data.final;
  state.thoughtsShown = data.thoughts_shown;
  state.retro = new Map(data.retrospective.map((e) => [e.message_id, e]));
  const s = state.study;
  $("study").textContent = s ? `Conversation ${s.position} of ${s.of} · Topic: ${s.topic}` : "";
  $("study").hidden = !s;
  buildReviewChoices();
  buildQuestions();
  buildFinal();
  markReviewed();
}

function showComposer() {
  const talking = state.page === Page.TALK && !conversationOver();
  $("join").hidden = !talking || !!state.me;
  $("composer").hidden = !talking || !state.me;
  if (state.me && state.page !== Page.PAUSED && state.page !== Page.CLOSED) {
    setStatus(`Connected as ${state.me}`);
  }
  if (!$("composer").hidden) $("text").focus();
  else if (!$("join").hidden) $("join-name").focus();
}

function pages(count) {
  const notice = $("elsewhere");
  notice.hidden = count < 2;
  notice.textContent = count < 2 ? "" : `This link was opened in another window (${count} windows`
    + " now). Both stay connected, and what either sends is sent as you. If that was not you,"
    + " tell the researcher.";
}

// -- where the page is ------------------------------------------------------------------------

function conversationEnded(text) {
  state.status = "ended";
  if (text) banner(text);
  $("join").hidden = true;
  $("composer").hidden = true;
  $("card").hidden = true;
  stopTyping();
}

function ended(data) {
  const reason = data.reason || "";
  conversationEnded(state.phase === "talk" ? `The conversation has ended. ${reason}` : reason);
}

function paused(reason) {
  banner(reason || PAUSED);
  setStatus("Paused");
  setPage(Page.PAUSED, true);
}

function closeForGood(text) {
  setStatus("Ended");
  if (text) banner(text);
  conversationEnded("");
  // Nothing can be saved any more: the forms go (a "thank you" stays).
  if (![Page.WAIT, Page.DONE].includes(state.page)) setPage(Page.CLOSED);
  hangUp();
}

// The socket closed: what the page does next follows from the server's close code.
function closed(code) {
  switch (code) {
    case Close.NEXT:  // the study's next conversation begins: start afresh, at once
      saveDraft();
      forgetConversation();
      clearConversation();
      banner("");
      setPage(Page.TALK);
      setStatus("The next conversation is starting…");
      return "now";
    case Close.FOR_GOOD:
      closeForGood(null);
      return "stop";
    case Close.PAUSED:
      if (state.page !== Page.PAUSED) paused(PAUSED);
      setStatus("Paused: waiting for the study to continue…");
      return "retry";
    default:
      if (state.page === Page.CLOSED) return "stop";
      if (state.page === Page.PAUSED) {
        setStatus("Paused: waiting for the study to continue…");
      } else {
        setStatus("Connection lost, reconnecting…");
      }
      return "retry";
  }
}

// Where a phase takes the page. A reconnect keeps a review that was opened again.
function applyPhase(phase, reconnect) {
  const before = state.phase;
  state.phase = phase;
  if (phase !== "talk" && phase !== "review") banner("");
  let page = phase;
  if (phase === "review" && state.page === Page.QUESTIONS) page = Page.QUESTIONS;
  if (reconnect && before === phase && state.page === Page.REVIEW) page = Page.REVIEW;
  setPage(page, page !== state.page && !(reconnect && before === phase));
}

const NOTES = {
  [Page.WAIT]: ["Your answers are saved", "Thank you — please wait for the next conversation."],
  [Page.DONE]: ["All done", "Thank you for taking part. You can close this page."],
  [Page.PAUSED]: ["Paused", PAUSED],
};

const HEADINGS = {
  [Page.WAIT]: "phase-title", [Page.DONE]: "phase-title", [Page.PAUSED]: "phase-title",
  [Page.REVIEW]: "review-title", [Page.QUESTIONS]: "questions-title", [Page.FINAL]: "final-title",
};

function setPage(page, focus) {
  if (state.page === Page.REVIEW && page !== Page.REVIEW) saveDraft();
  const changed = page !== state.page;
  state.page = page;
  document.body.dataset.view = page;
  const shown = {
    "phase-note": page in NOTES,
    review: page === Page.REVIEW,
    rate: page === Page.REVIEW && state.phase === "review" && !!state.questionnaire && !!state.me,
    questions: page === Page.QUESTIONS,
    final: page === Page.FINAL,
    thoughts: page === Page.TALK && state.thoughtsShown,
  };
  for (const [id, on] of Object.entries(shown)) $(id).hidden = !on;
  const side = Object.values(shown).some(Boolean);
  $("side").hidden = !side;
  $("main").classList.toggle("with-side", side);
  if (page in NOTES) {
    $("phase-title").textContent = NOTES[page][0];
    $("phase-text").textContent = NOTES[page][1];
    $("phase-review").hidden = page === Page.PAUSED || !state.me || state.messages.length === 0;
  }
  if (page === Page.REVIEW) {
    $("review-close").hidden = state.phase === "review";
    $("review-close").textContent = state.phase === "final" ? "Back to the last questions" : "Close the review";
    renderReview();
  } else {
    highlight(null);
  }
  $("messages").classList.toggle("reviewing", page === Page.REVIEW);
  for (const id of Object.values(FORM_ERRORS)) $(id).textContent = "";
  if (page !== Page.TALK) { $("join").hidden = true; $("composer").hidden = true; }
  if (changed) {
    $("side").scrollTop = 0;
    if (page !== Page.REVIEW) window.scrollTo(0, 0);  // a phone: the transcript is hidden then
  }
  const heading = HEADINGS[page];
  if (focus && heading) {  // a screen reader starts reading the new part of the page
    $(heading).tabIndex = -1;
    $(heading).focus({ preventScroll: true });
  }
}

// -- what the person does ----------------------------------------------------------------------

$("composer").addEventListener("submit", (event) => { event.preventDefault(); sendMessage(); });
$("text").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    sendMessage();
  }
});
$("text").addEventListener("input", typed);
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
$("review-close").addEventListener("click", () => setPage(state.phase, true));
$("phase-review").addEventListener("click", () => setPage(Page.REVIEW, true));
$("final-review").addEventListener("click", () => setPage(Page.REVIEW, true));
$("rate-open").addEventListener("click", () => setPage(Page.QUESTIONS, true));
$("questions-back").addEventListener("click", () => setPage(Page.REVIEW, true));
$("questions-form").addEventListener("submit", (event) => { event.preventDefault(); submitQuestions(); });
$("final-form").addEventListener("submit", (event) => { event.preventDefault(); submitFinal(); });

connect({ frame: handle, closed });
