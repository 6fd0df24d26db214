// What the page knows: the one explicit state of the page (what it shows) and the conversation
// it shows. Where the person is in the study (the server's phase) is data here, not a flag.

// What the page shows: exactly one at a time.
export const Page = Object.freeze({
  CONNECTING: "connecting", // before the first hello
  TALK: "talk",             // the conversation is live (joining, or talking)
  REVIEW: "review",         // looking back at the conversation, message by message
  QUESTIONS: "questions",   // the statements about the conversation's agent
  WAIT: "wait",             // answered; the next conversation has not started
  FINAL: "final",           // the end-of-study questions
  DONE: "done",             // nothing more to do
  PAUSED: "paused",         // the study is paused: the page comes back by itself
  CLOSED: "closed",         // for good: the seat was withdrawn or the study ended
});

// Where the person is, as the server says ("talk", "review", "wait", "final", "done").
export const PHASES = ["talk", "review", "wait", "final", "done"];

export const state = {
  page: Page.CONNECTING,
  // Set from each hello: the conversation (a session id) this page shows.
  session: null, me: null, phase: "talk", status: "open",
  lastId: 0, people: new Map(), notes: new Map(), labels: new Set(), messages: [],
  question: "", answers: [], limits: { text: 2000, name: 40 },
  study: null, reviewLabels: { wanted: {}, timings: {} }, questionnaire: null, final: null,
  thoughtsShown: false, thoughts: new Map(),
  retro: new Map(), drafts: new Map(), reviewIndex: 0,
  typing: new Map(), typingSent: 0, cardFor: null,
  // The text of a message sent and not yet seen back: the composer keeps it until then.
  pending: null,
};

// A new conversation (the next one of a plan, or the same link's conversation run again):
// everything of the one shown goes.
export function forgetConversation() {
  Object.assign(state, {
    session: null, lastId: 0, people: new Map(), notes: new Map(), labels: new Set(),
    messages: [], status: "open", phase: "talk", cardFor: null, retro: new Map(),
    drafts: new Map(), reviewIndex: 0, thoughts: new Map(), pending: null,
  });
}

export function conversationOver() { return state.status === "ended" || state.phase !== "talk"; }
