"""The command line's live transcript: each message with the thought behind it and its score."""

from __future__ import annotations

from typing import Any, TextIO


class TranscriptPrinter:
    """Prints the conversation as it happens: each message with the thought behind it and its score."""

    def __init__(self, out: TextIO, err: TextIO, turns: int) -> None:
        self.out, self.err, self.turns = out, err, turns
        self.thoughts: dict[int, Any] = {}
        self.scores: dict[int, Any] = {}
        self.interpretations: dict[int, str] = {}
        self.retries = (
            ""  # what the progress line says about retries, e.g. "2 retries, 2 after 429 (3.0 s)"
        )

    def __call__(self, e: Any) -> None:
        if e.kind == "session_started":
            print(
                f"Session {e.session_id} · engine: {e.engine} · model: {e.model} · seed {e.seed}",
                file=self.out,
            )
            if e.engine == "offline engine":
                print(
                    "(offline engine: no language model; thoughts and replies come from templates over real embeddings)",
                    file=self.out,
                )
        elif e.kind == "thought_formed":
            self.thoughts[e.thought.id] = e.thought
        elif e.kind == "thought_evaluated":
            self.scores[e.evaluation.thought_id] = e.evaluation
        elif e.kind == "trigger_fired":
            label = "new message" if e.trigger == "new_message" else "pause"
            more = f" · {self.retries}" if self.retries else ""
            print(f"  … step {e.step}: {label}, agents thinking{more}", file=self.err, flush=True)
        elif e.kind == "usage_recorded":
            said = e.usage.retry_text()
            if said != self.retries:  # a new retry: say so at once (a 429 wait can be long)
                self.retries = said
                print(f"  … step {e.step}: {said}", file=self.err, flush=True)
        elif e.kind == "message_posted":
            m = e.message
            mark = " [interrupts]" if m.interruption else ""
            print(
                f"\n[{m.id:>2}/{self.turns}] {m.speaker}{mark}: {m.text}", file=self.out, flush=True
            )
            if m.thought_id is not None and m.thought_id in self.thoughts:
                t = self.thoughts[m.thought_id]
                ev = self.scores.get(t.id)
                score = (
                    f"score {ev.score:.2f} ({ev.method}, rating {ev.rating})" if ev else "no score"
                )
                print(
                    f"        thought #{t.id} (System {t.system}, {score}): {t.text}", file=self.out
                )
                if t.stimuli:
                    print(
                        f"        stimuli: {', '.join(t.stimuli)} · origin: {m.origin}",
                        file=self.out,
                    )
        elif e.kind == "thought_refused":
            what = "thought" if e.stage == "thought" else "message"
            print(f"  ! {e.agent}'s {what} refused: {e.reason}", file=self.err, flush=True)
        elif e.kind == "error_occurred":
            print(f"  ! {e.where}: {e.message}", file=self.err, flush=True)
        elif e.kind == "session_finished":
            print(f"\nSession {e.status}: {e.reason}", file=self.out)
