// The rater's page: one explicit phase, driven by the server's frames.
//   connecting → reading (a task typed out) → answering (statements or choice open)
//   → reading (the next task) … → finished (completion code); or stopped (closed for good).
import { CLOSE } from "/static/protocol.js";
import { Connection } from "/static/connection.js";
import { ConversationView } from "/static/conversation.js";
import { StatementsForm, choice, clearChoice } from "/static/rating.js";

const $ = (id) => document.getElementById(id);

/** @type {"connecting" | "reading" | "answering" | "finished" | "stopped"} */
let phase = "connecting";
let welcome = null;
let task = null;
let views = [];
let form = null;

const STOPPED = {
  [CLOSE.ENDED]: "The researcher has stopped the rating for now. Your answers are saved; open this link again later to go on.",
  [CLOSE.REPLACED]: "This link was opened in another tab or browser, which goes on from here. Close this one.",
  [CLOSE.BAD_FRAME]: "This page sent something the server did not understand. Reload the page.",
};

function setPhase(next) {
  phase = next;
  document.body.dataset.phase = next;
  $("intro").hidden = next !== "connecting" && next !== "reading";
  $("task").hidden = next !== "reading" && next !== "answering";
  $("finished").hidden = next !== "finished";
  $("stopped").hidden = next !== "stopped";
  $("speed").closest("label").hidden = next === "finished" || next === "stopped";
  const pairwise = task !== null && task.mode === "pairwise";
  $("statements").hidden = !(next === "answering" && !pairwise);
  $("choice").hidden = !(next === "answering" && pairwise);
  update();
}

/** The rater's choice of typing speed, a multiple of the human speed the server gives. */
function speed() {
  return Number($("speed").value) || 1;
}

function showError(text) {
  $("error").textContent = text ? `⚠ ${text}` : "";
  $("error").hidden = !text;
}

const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${location.pathname}/ws`;
const connection = new Connection(url, {
  onFrame: receive,
  onState(state, code) {
    if (state === "open") {
      $("status").textContent = "Connected";
    } else if (state === "reconnecting") {
      $("status").textContent = "Reconnecting…";
    } else {
      $("status").textContent = "Disconnected";
      $("stopped-text").textContent = STOPPED[code] ?? "The connection was closed.";
      for (const v of views) v.stop();
      setPhase("stopped");
    }
  },
});

function receive(frame) {
  switch (frame.kind) {
    case "welcome":
      welcome = frame;
      // A reconnect keeps the form, and with it answers chosen but not yet submitted.
      if (!form) form = new StatementsForm($("statements-form"), frame.statements, update);
      break;
    case "task":
      showTask(frame);
      break;
    case "ack":
      break;
    case "refused":
      showError(frame.message);
      update();
      break;
    case "finished":
      for (const v of views) v.stop();
      task = null;
      $("position").textContent = "";
      $("finished-text").textContent =
        frame.total === 1 ? "You have finished the one assignment." : `You have finished all ${frame.total} assignments.`;
      $("code").textContent = frame.code;
      setPhase("finished");
      break;
    default:
      break;
  }
}

function showTask(frame) {
  for (const v of views) v.stop();
  showError("");
  // The same task again (a reconnect): answers chosen but not yet submitted stay.
  const same = task !== null && task.position === frame.position && task.mode === frame.mode;
  task = frame;
  $("position").textContent = `${frame.position} of ${frame.total}`;
  $("conversations").replaceChildren();
  views = frame.conversations.map((conv, part) => {
    const view = new ConversationView(conv, welcome.cps * speed(), {
      shown: (count) => connection.send({ kind: "shown", task: frame.position, part, count }),
      mark: (n, comment) => connection.send({ kind: "mark", task: frame.position, part, n, comment }),
      unmark: (n) => connection.send({ kind: "unmark", task: frame.position, part, n }),
      done: () => next(),
    });
    $("conversations").append(view.root);
    view.toEnd(); // a resumed conversation opens on its last message shown
    return view;
  });
  if (!same) {
    form.set(frame.ratings);
    clearChoice($("choice"), $("reason"));
  }
  setPhase(views.every((v) => v.complete) ? "answering" : "reading");
  next();
}

/** Play the first conversation not yet shown in full; answering once all are. */
function next() {
  const open = views.find((v) => !v.complete);
  if (open) {
    open.play();
  } else if (phase === "reading") {
    setPhase("answering");
  }
}

function update() {
  const hint = $("hint");
  if (phase === "reading") {
    hint.textContent =
      views.length > 1
        ? "Watch both conversations to the end (or use “Show all”) first."
        : "The statements open once the whole conversation has been shown.";
  } else if (phase === "answering" && task && task.mode === "conversation" && form) {
    const missing = form.missing();
    $("submit-ratings").disabled = missing > 0;
    hint.textContent = missing ? `${missing} of ${welcome.statements.length} statements still open.` : "All answered: submit when ready.";
  } else if (phase === "answering" && task) {
    const chosen = choice($("choice"));
    $("submit-choice").disabled = !chosen;
    hint.textContent = chosen ? "Write why, then submit." : "Choose the conversation that felt more natural.";
  } else {
    hint.textContent = "";
  }
}

$("submit-ratings").addEventListener("click", () => {
  if (phase !== "answering" || !task || form.missing() > 0) return;
  if (connection.send({ kind: "rate", task: task.position, values: form.values() }) > 0) {
    $("submit-ratings").disabled = true; // until the next task, or a refusal
  }
});
$("submit-choice").addEventListener("click", () => {
  const chosen = choice($("choice"));
  const reason = $("reason").value.trim();
  if (phase !== "answering" || !task || !chosen) return;
  if (!reason) {
    showError("Please write why you chose it: a reason is required.");
    $("reason").focus();
    return;
  }
  if (connection.send({ kind: "prefer", task: task.position, choice: chosen, reason }) > 0) {
    $("submit-choice").disabled = true;
  }
});
$("speed").addEventListener("change", () => {
  for (const v of views) v.cps = welcome.cps * speed(); // from the next message on
});
for (const input of document.querySelectorAll('input[name="choice"]')) input.addEventListener("change", update);

setPhase("connecting");
connection.open();
