"""Understanding an utterance and forming thoughts, with topic phrases from KeyBERT.

System-1 thoughts come from the latest utterance alone; System-2 thoughts from the retrieved
stimuli: long-term memories first, then retained thoughts, then what others said. A stimulus
already said aloud in the conversation (the same sentence) comes last.
"""

from __future__ import annotations

import random
import re

import numpy as np

from playground import domain
from playground.cognition.base import Context, ThoughtDraft
from playground.cognition.offline.mind import Mind, is_greeting, is_question
from playground.cognition.offline.repeats import SHARED_RUN, shared_run, words
from playground.domain.refs import parse_ref, ref_kind

PREFIX = "Still on my mind:"
ORDER = {"memory": 0, "thought": 1, "message": 2}


def addressee(message: domain.Message, participants: list[str]) -> str | None:
    """A participant the message hands the turn to: named with a question, at the start, or with @."""
    text = message.text
    best: tuple[int, str] | None = None
    for name in participants:
        if name == message.speaker:
            continue
        for hit in re.finditer(rf"(?<![\w@])@?{re.escape(name)}\b", text, flags=re.I):
            direct = (
                text[hit.start() - 1 : hit.start()] == "@"
                or hit.start() == 0
                or "?" in text[hit.start() :]
                or text.strip().endswith("?")
            )
            if direct and (best is None or hit.start() > best[0]):
                best = (hit.start(), name)
    return best[1] if best else None


async def interpret(
    mind: Mind, message: domain.Message, recent: list[domain.Message], participants: list[str]
) -> str:
    """One sentence on what the speaker said in context."""
    mind.see(participants, [*recent, message])
    who = message.speaker
    about = await mind.topic(message.text)
    on = f" about {about}" if about else ""
    if is_greeting(message.text) and len(message.text.split()) <= 4:
        return f"{who} greets the group and hopes someone will start chatting."
    if is_question(message.text):
        if to := addressee(message, participants):
            return f"{who} asks {to}{on or ' something'} and waits for their answer."
        return f"{who} asks the group{on or ' a question'} and wants to hear from others."
    if recent and recent[-1].speaker != who and (prev := await mind.topic(recent[-1].text)):
        tail = f" by talking about {about}" if about and about != prev else ""
        return f"{who} reacts to {recent[-1].speaker}'s point about {prev}{tail}."
    if about:
        return f"{who} shares something about {about} and may want others to react."
    return f"{who} makes a short remark and may want others to react."


def turn_type(message: domain.Message, participants: list[str], origin: str) -> domain.TurnType:
    """Allocated to the participant the message names as addressee, else open."""
    if to := addressee(message, participants):
        return domain.TurnType(message_id=message.id, kind="allocated", addressee=to, origin=origin)
    return domain.TurnType(message_id=message.id, kind="open", origin=origin)


async def form_thoughts(
    mind: Mind, ctx: Context, stimuli: list[domain.Stimulus], *, system1: int, system2: int
) -> list[ThoughtDraft]:
    """``system1`` quick thoughts on the latest utterance, ``system2`` from the stimuli.

    Each thought's topics are taken from the content it was built on (a memory, a message), so
    the evaluation can tell what it would add.
    """
    mind.see_context(ctx)
    rng = mind.rng(ctx.agent, ctx.step, "form")
    made: list[tuple[ThoughtDraft, str]] = [await _system1(mind, ctx, rng) for _ in range(system1)]
    mind.quick.update(d.text for d, _ in made)
    if system2:
        made += await _deliberate(mind, ctx, stimuli, system2, rng)
    for draft, source in made:
        mind.topics.alias(draft.text, source)
    return [d for d, _ in made]


async def _deliberate(
    mind: Mind, ctx: Context, stimuli: list[domain.Stimulus], n: int, rng: random.Random
) -> list[tuple[ThoughtDraft, str]]:
    """``n`` System-2 thoughts: from the stimuli, else from the persona, else curiosity."""
    said = [words(m.text, mind.people) for m in mind.transcript.messages]
    # A memory that a retained thought already draws on is developed through that thought
    # (evolution) rather than thought afresh.
    developed = {mind.topics.source_of(s.text) for s in stimuli if ref_kind(s.ref) == "thought"}
    usable: list[tuple[int, domain.Stimulus]] = []
    for s in stimuli:
        kind, _ = parse_ref(s.ref)
        if kind == "memory" and s.text in developed:
            continue
        if kind == "message":
            speaker, _, text = s.text.partition(": ")
            if speaker == ctx.agent or is_question(text) or text in mind.echoes:
                continue  # follow up on what someone told of their own, not on a question
            if not await mind.topic(text):
                continue
        if kind == "thought" and (s.text in mind.quick or s.text.startswith(PREFIX)):
            continue  # a passing reaction, or an evolution already: nothing to develop
        body = words(s.text.partition(": ")[2] if kind == "message" else s.text, mind.people)
        spoken = kind == "memory" and any(shared_run(body, w) >= SHARED_RUN for w in said)
        usable.append((ORDER.get(kind, 3) + (10 if spoken else 0), s))
    usable.sort(key=lambda pair: pair[0])
    taken = {s.text for s in stimuli}
    facts = [f for f in await persona_facts(mind, ctx, said) if f not in taken][:1]
    out: list[tuple[ThoughtDraft, str]] = []
    fresh = [st for rank, st in usable if rank < 10]
    sources: list[domain.Stimulus | str] = [*fresh, *facts]
    sources += [st for rank, st in usable if rank >= 10]
    for source in sources:
        if isinstance(source, str):  # a persona fact
            made = await _share(mind, ctx, source, [], rng)
        else:
            made = await _system2(mind, ctx, source, rng)
        if made[0].text not in {d.text for d, _ in out}:
            out.append(made)
        if len(out) == n:
            return out
    while len(out) < n and ctx.latest and ctx.latest.speaker != ctx.agent:
        made = await _wonder(mind, ctx, rng)
        if made[0].text in {d.text for d, _ in out}:
            break
        out.append(made)
    return out


async def persona_facts(mind: Mind, ctx: Context, said: list[list[str]]) -> list[str]:
    """The persona's facts not yet said, most similar to the latest utterance first.

    The LLM engine's every prompt carries the persona; here the persona's facts play that part
    when no stimulus is left to think from.
    """
    if ctx.persona is None or ctx.latest is None:
        return []
    facts = [
        f
        for f in ctx.persona.facts
        if not any(shared_run(words(f, mind.people), w) >= SHARED_RUN for w in said)
    ]
    if not facts:
        return []
    vecs = await mind.embedder.embed(facts)
    u = await mind.embedder.embed_one(ctx.latest.text)
    order = np.argsort(-(vecs @ u), kind="stable")
    return [facts[i] for i in order]


def fact_of(text: str, persona: domain.Persona | None) -> str | None:
    """The persona fact a thought shares (its words appear in the thought), if any."""
    if persona is None:
        return None
    said = words(text)
    best = max(persona.facts, key=lambda f: shared_run(words(f), said))
    return best if shared_run(words(best), said) >= min(4, len(words(best))) else None


async def _system1(mind: Mind, ctx: Context, rng: random.Random) -> tuple[ThoughtDraft, str]:
    m = ctx.latest
    if m is None:
        return ThoughtDraft(text="Nobody has said anything yet.", system=1), ""
    about = await mind.topic(m.text)
    who = m.speaker
    if ctx.trigger == "pause":
        options = ["The chat has gone quiet; someone should say something."]
        if about:
            options.append(f"It went quiet after the bit about {about}.")
    elif is_greeting(m.text):
        options = [f"{who} said hi; I should say hi back.", f"Nice to see {who} here."]
    elif is_question(m.text):
        options = (
            [
                f"{who} asked about {about}; I could answer.",
                f"Good question from {who} about {about}.",
            ]
            if about
            else [f"{who} asked something; I could answer.", f"Good question from {who}."]
        )
    elif about:
        options = [
            f"Interesting point about {about} from {who}.",
            f"I'd like to hear more about {about}.",
            f"I agree with {who} on {about}.",
        ]
    else:
        options = [f"{who} has a point.", f"Nice one from {who}."]
    return ThoughtDraft(text=rng.choice(options), system=1, stimuli=[m.ref]), m.text


async def _system2(
    mind: Mind, ctx: Context, st: domain.Stimulus, rng: random.Random
) -> tuple[ThoughtDraft, str]:
    kind, _ = parse_ref(st.ref)
    latest = [ctx.latest.ref] if ctx.latest else []
    if kind == "thought":
        text = short(f"{PREFIX} {st.text}")
        return ThoughtDraft(text=text, system=2, stimuli=[st.ref, *latest]), mind.topics.source_of(
            st.text
        )
    if kind == "message":
        speaker, _, said = st.text.partition(": ")
        about = await mind.topic(said)
        draft = ThoughtDraft(
            text=short(f"Ask {speaker} more about {about}."), system=2, stimuli=[st.ref]
        )
        return draft, said
    return await _share(mind, ctx, st.text, [st.ref], rng)


async def _share(
    mind: Mind, ctx: Context, fact: str, refs: list[str], rng: random.Random
) -> tuple[ThoughtDraft, str]:
    """A thought to share a memory or a persona fact, in reply to the latest utterance."""
    latest = [ctx.latest.ref] if ctx.latest else []
    source, fact = fact, fact.strip().rstrip(".!")
    about = await mind.topic(ctx.latest.text) if ctx.latest else None
    options = [
        f"I could share that {fact}." if fact.startswith("I ") else f"I could share: {fact}."
    ]
    if about:
        options.append(f"{about[:1].upper()}{about[1:]} reminds me: {fact}.")
    return ThoughtDraft(text=short(rng.choice(options)), system=2, stimuli=[*refs, *latest]), source


async def _wonder(mind: Mind, ctx: Context, rng: random.Random) -> tuple[ThoughtDraft, str]:
    """A System-2 thought with no stimulus to draw on: curiosity about the latest utterance."""
    assert ctx.latest is not None
    about = await mind.topic(ctx.latest.text)
    options = (
        [f"What do the others think about {about}?", f"I don't know much about {about}, honestly."]
        if about
        else ["What do the others think?", f"I wonder what {ctx.latest.speaker} meant."]
    )
    draft = ThoughtDraft(text=rng.choice(options), system=2, stimuli=[ctx.latest.ref])
    return draft, ctx.latest.text


def short(text: str, limit: int = 14) -> str:
    """Under 15 words (docs/spec.md §1.3), cut at a word boundary as the agent would cut it."""
    parts = text.strip().split()
    return " ".join(parts) if len(parts) <= limit else " ".join(parts[:limit]).rstrip(",;:") + "…"
