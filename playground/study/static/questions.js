// The questions about a study conversation's agent, and the end-of-study questions.
import { $, checked, choice, el, setChecked } from "./dom.js";
import { sendAbout } from "./connection.js";
import { state } from "./state.js";

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

export function buildQuestions() {
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

export function submitQuestions() {
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
  sendAbout({ type: "questionnaire", answers });
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

export function buildFinal() {
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

export function submitFinal() {
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
  sendAbout({ type: "final", answers });
}

export function answered(what, answers) {
  if (what === "questionnaire" && state.questionnaire) state.questionnaire.answers = answers;
  if (what === "final" && state.final) state.final.answers = answers;
}
