// One conversation typed out at human speed, with "show all" and unnatural-turn marks.
// Text is only ever set with textContent.

const FLAG_OFF = "⚑ Unnatural?";
const FLAG_ON = "⚑ Marked unnatural";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export class ConversationView {
  /**
   * @param {object} conv a protocol Conversation (label, lines, shown, marks)
   * @param {number} cps characters per second
   * @param {{shown: (count: number) => void, mark: (n: number, comment: string) => void,
   *          unmark: (n: number) => void, done: () => void}} on
   */
  constructor(conv, cps, on) {
    this.conv = conv;
    this.cps = cps;
    this.on = on;
    this.cards = [];
    this.marks = new Map(conv.marks.map((m) => [m.n, m.comment]));
    this.timer = null;
    this.complete = false;
    this.root = el("section", "conversation");
    const head = el("div", "conv-head");
    head.append(el("h2", null, conv.label ? `Conversation ${conv.label}` : "Conversation"));
    this.showAllButton = el("button", "show-all", "Show all");
    this.showAllButton.type = "button";
    this.showAllButton.addEventListener("click", () => this.showAll());
    head.append(this.showAllButton);
    this.root.append(head);
    this.list = el("ol", "messages");
    // The list follows the message being typed while the rater is at its end; a rater who
    // scrolls up to read again is left there until they scroll back down.
    this.follow = true;
    this.autoTop = 0;
    this.list.addEventListener("scroll", () => {
      const l = this.list;
      if (Math.abs(l.scrollTop - this.autoTop) < 2) return; // our own scrolling
      this.follow = l.scrollHeight - l.scrollTop - l.clientHeight < 24;
    });
    this.root.append(this.list);
    this.progress = el("p", "progress");
    this.root.append(this.progress);
    for (let i = 0; i < Math.min(conv.shown, conv.lines.length); i++) {
      this.addCard(conv.lines[i]).text.textContent = conv.lines[i].text;
    }
    if (this.cards.length >= conv.lines.length) this.finish();
    this.update();
  }

  addCard(line) {
    const li = el("li", "msg");
    li.dataset.n = String(line.n);
    const head = el("div", "msg-head");
    head.append(el("span", "who", line.speaker));
    const flag = el("button", "flag", FLAG_OFF);
    flag.type = "button";
    flag.setAttribute("aria-pressed", "false");
    head.append(flag);
    li.append(head);
    const text = el("p", "text", "");
    li.append(text);
    const comment = el("input", "comment");
    comment.type = "text";
    comment.maxLength = 500;
    comment.placeholder = "What felt unnatural? (optional, Enter to save)";
    comment.hidden = true;
    li.append(comment);
    const card = { line, li, text, flag, comment };
    const setMarked = (on) => {
      flag.textContent = on ? FLAG_ON : FLAG_OFF;
      flag.setAttribute("aria-pressed", on ? "true" : "false");
      li.classList.toggle("marked", on);
      comment.hidden = !on;
    };
    if (this.marks.has(line.n)) {
      comment.value = this.marks.get(line.n);
      setMarked(true);
    }
    flag.addEventListener("click", () => {
      const on = !this.marks.has(line.n);
      if (on) {
        this.marks.set(line.n, "");
        this.on.mark(line.n, "");
        setMarked(true);
        comment.focus();
      } else {
        this.marks.delete(line.n);
        comment.value = "";
        this.on.unmark(line.n);
        setMarked(false);
      }
      this.update();
    });
    const save = () => {
      const value = comment.value.trim();
      if (this.marks.has(line.n) && this.marks.get(line.n) !== value) {
        this.marks.set(line.n, value);
        this.on.mark(line.n, value);
      }
    };
    comment.addEventListener("change", save);
    comment.addEventListener("keydown", (e) => {
      if (e.key === "Enter") save();
    });
    this.list.append(li);
    this.cards.push(card);
    return card;
  }

  /** Type the next messages, one after the other. */
  play() {
    if (this.complete || this.timer !== null) return;
    const index = this.cards.length;
    if (index >= this.conv.lines.length) {
      this.finish();
      return;
    }
    const line = this.conv.lines[index];
    const card = this.addCard(line);
    this.on.shown(this.cards.length);
    this.update();
    this.toEnd();
    let typed = 0;
    const step = Math.max(1, Math.round(this.cps / 20));
    this.timer = setInterval(() => {
      typed = Math.min(line.text.length, typed + step);
      card.text.textContent = line.text.slice(0, typed);
      this.toEnd();
      if (typed >= line.text.length) {
        clearInterval(this.timer);
        this.timer = setTimeout(() => {
          this.timer = null;
          this.play();
        }, Math.min(1000, Math.max(40, 20_000 / this.cps)));
      }
    }, 50);
  }

  stop() {
    if (this.timer !== null) {
      clearInterval(this.timer);
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  showAll() {
    this.stop();
    for (const card of this.cards) card.text.textContent = card.line.text;
    while (this.cards.length < this.conv.lines.length) {
      const line = this.conv.lines[this.cards.length];
      this.addCard(line).text.textContent = line.text;
    }
    this.on.shown(this.cards.length);
    this.follow = true; // "Show all" ends on the last message, wherever the rater was
    this.autoTop = this.list.scrollTop;
    this.finish();
    this.toEnd();
  }

  /** Whether the list follows the typing, as the rater left it: read from the list itself when
   * it is not where this page last put it (the rater's scroll event may not have arrived yet on
   * a busy machine). */
  following() {
    const l = this.list;
    if (Math.abs(l.scrollTop - this.autoTop) >= 2) {
      this.follow = l.scrollHeight - l.scrollTop - l.clientHeight < 24;
    }
    return this.follow;
  }

  /** Scroll the list to its last message, if it follows the typing. */
  toEnd() {
    if (!this.following()) return;
    this.list.scrollTop = this.list.scrollHeight;
    this.autoTop = this.list.scrollTop;
  }

  finish() {
    this.stop();
    const already = this.complete;
    this.complete = true;
    this.update();
    if (!already) this.on.done();
  }

  update() {
    this.showAllButton.disabled = this.complete;
    const marked = this.marks.size ? ` · ${this.marks.size} marked unnatural` : "";
    const n = this.conv.lines.length;
    this.progress.textContent = this.complete
      ? `End of the conversation (${n} messages)${marked}`
      : `Message ${this.cards.length} of ${n}${marked}`;
  }
}
