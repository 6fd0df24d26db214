// Looking back at the conversation once it is over, message by message: what the person was
// thinking, whether they wanted to say it, and when they would have spoken.
import { $, agentTag, checked, choice, el, isAgent, setChecked, timeOf } from "./dom.js";
import { sendAbout } from "./connection.js";
import { Page, state } from "./state.js";

export function buildReviewChoices() {
  const { wanted, timings } = state.reviewLabels;
  $("r-wanted").replaceChildren(
    ...Object.entries(wanted).map(([key, text]) => choice("r-wanted", key, text, `r-wanted-${key}`)));
  $("r-timing").replaceChildren(
    ...Object.entries(timings).map(([key, text]) => choice("r-timing", key, text, `r-timing-${key}`)));
  if (state.page === Page.REVIEW) renderReview();
}

function currentMessage() {
  return state.messages[state.reviewIndex] || null;
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
export function saveDraft() {
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

export function renderReview() {
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
  head.append(el("span", "who", `#${m.id} ${m.speaker}`));
  if (isAgent(m.kind)) head.append(agentTag());
  head.append(el("span", "when", timeOf(m.at)));
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

export function showAfter() {
  $("r-after-row").hidden = checked("r-timing") !== "after";
}

export function showSaved() {
  const m = currentMessage();
  const saved = $("review-saved");
  if (!m) return;
  const draft = state.drafts.get(m.id);
  const pending = draft && !sameEntry(draft, state.retro.get(m.id) || BLANK);
  saved.textContent = pending ? "Not saved yet" : state.retro.has(m.id) ? "Saved" : "";
  saved.classList.toggle("pending", !!pending);
}

export function highlight(id) {
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

export function step(by) {
  const to = state.reviewIndex + by;
  if (to < 0 || to >= state.messages.length) return;
  saveDraft();
  state.reviewIndex = to;
  renderReview();
}

export function goToMessage(id) {
  const index = state.messages.findIndex((m) => m.id === id);
  if (index < 0 || index === state.reviewIndex) return;
  saveDraft();
  state.reviewIndex = index;
  renderReview();
}

export function markReviewed(only) {
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

export function saveRetro() {
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
  if (sendAbout({ type: "retro", message_id: m.id, ...entry })) {
    $("review-saved").textContent = "Saving…";
    $("review-saved").classList.remove("pending");
  }
}

export function retroSaved(entry) {
  state.retro.set(entry.message_id, entry);
  const draft = state.drafts.get(entry.message_id);
  if (draft && sameEntry(draft, entry)) state.drafts.delete(entry.message_id);
  markReviewed(entry.message_id);
  const m = currentMessage();
  if (state.page === Page.REVIEW && m && m.id === entry.message_id) {
    if (!state.drafts.has(m.id)) renderReview();
    else showSaved();
  }
}

