// Small helpers every part of the page uses. Every piece of text from the server is set with
// textContent: nothing is ever parsed as HTML.
import { Page, state } from "./state.js";

export const $ = (id) => document.getElementById(id);

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function setStatus(text) { $("status").textContent = text; }

export function banner(text) {
  $("banner").textContent = text;
  $("banner").hidden = !text;
}

export function timeOf(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// A participant that is not a person is marked as such in words, not only by colour.
export function isAgent(kind) { return kind !== "human"; }

export function agentTag() { return el("span", "tag agent", "AI agent"); }

// Errors are shown next to the form in view; the conversation's own fade after a while.
export const FORM_ERRORS = {
  [Page.REVIEW]: "review-error", [Page.QUESTIONS]: "questions-error", [Page.FINAL]: "final-error",
};

export function showError(text) {
  if (FORM_ERRORS[state.page]) {
    if (state.page === Page.REVIEW) $("review-saved").textContent = "";
    $(FORM_ERRORS[state.page]).textContent = text;
    return;
  }
  $("error").textContent = text;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { $("error").textContent = ""; }, 8000);
}

// -- form parts -------------------------------------------------------------------------------

export function choice(name, value, text, id) {
  const label = el("label", "choice");
  const input = el("input");
  input.type = "radio";
  input.name = name;
  input.value = value;
  input.id = id;
  label.append(input, el("span", "", text));
  return label;
}

export function checked(name) {
  const input = document.querySelector(`input[name="${name}"]:checked`);
  return input ? input.value : null;
}

export function setChecked(name, value) {
  for (const input of document.querySelectorAll(`input[name="${name}"]`)) {
    input.checked = value !== null && value !== undefined && input.value === String(value);
  }
}
