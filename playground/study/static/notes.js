// The person's private notes on messages (a reason for their own, a reaction to another's) and
// their answers to the in-the-moment question about an agent's message.
import { $, el } from "./dom.js";
import { sendAbout } from "./connection.js";
import { conversationOver, state } from "./state.js";

export function noteText(note) {
  return `${note.kind === "reason" ? "Your reason" : "Your reaction"} (private): ${note.text}`;
}

export function addNote(note) {
  const list = state.notes.get(note.message_id) || [];
  if (list.some((n) => n.text === note.text && n.kind === note.kind)) return;
  list.push(note);
  state.notes.set(note.message_id, list);
  const item = $(`m${note.message_id}`);
  if (item) item.append(el("div", "mynote", noteText(note)));
}

export function openNote(item, m) {
  if (!state.me || conversationOver() || item.querySelector("form")) return;
  const form = $("note-form").content.firstElementChild.cloneNode(true);
  const mine = m.speaker === state.me;
  form.querySelector("label").textContent = mine
    ? "Why did you say this? (private: only the researcher sees it)"
    : `How did you react to ${m.speaker}'s message? (private: only the researcher sees it)`;
  const input = form.querySelector("input");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text && sendAbout({ type: "note", message_id: m.id, text })) form.remove();
  });
  item.append(form);
  input.focus();
}

export function ask(m) {
  state.cardFor = m.id;
  $("card-question").textContent = state.question.replace("{speaker}", m.speaker);
  const answers = $("card-answers");
  answers.replaceChildren();
  for (const answer of state.answers) {
    const button = el("button", "", answer);
    button.type = "button";
    button.addEventListener("click", () => {
      if (sendAbout({ type: "label", message_id: m.id, answer })) state.labels.add(m.id);
      $("card").hidden = true;
    });
    answers.append(button);
  }
  $("card").hidden = false;
}
