// The seven statements (1–7) and the pairwise choice with its required reason.

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export class StatementsForm {
  /** @param {HTMLFormElement} form @param {Array<{key: string, statement: string}>} statements */
  constructor(form, statements, onChange) {
    this.form = form;
    this.statements = statements;
    this.form.replaceChildren();
    for (const s of statements) {
      const row = el("fieldset", "statement");
      row.dataset.key = s.key;
      row.append(el("legend", null, s.statement));
      for (let v = 1; v <= 7; v++) {
        const label = el("label");
        const input = document.createElement("input");
        input.type = "radio";
        input.name = s.key;
        input.value = String(v);
        input.addEventListener("change", onChange);
        label.append(input, document.createTextNode(String(v)));
        row.append(label);
      }
      this.form.append(row);
    }
  }

  set(values) {
    for (const s of this.statements) {
      for (const input of this.form.querySelectorAll(`input[name="${s.key}"]`)) {
        input.checked = values[s.key] !== undefined && Number(input.value) === values[s.key];
      }
    }
  }

  values() {
    const out = {};
    for (const s of this.statements) {
      const checked = this.form.querySelector(`input[name="${s.key}"]:checked`);
      if (checked) out[s.key] = Number(checked.value);
    }
    return out;
  }

  missing() {
    return this.statements.length - Object.keys(this.values()).length;
  }
}

export function choice(root) {
  const checked = root.querySelector('input[name="choice"]:checked');
  return checked ? checked.value : null;
}

export function clearChoice(root, reason) {
  for (const input of root.querySelectorAll('input[name="choice"]')) input.checked = false;
  reason.value = "";
}
