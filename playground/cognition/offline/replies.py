"""Articulation: a thought said aloud, from plain templates.

- The reply follows the thought's source: a memory is shared (as an answer when a question is
  open, else as a reaction); a point someone made earlier is followed up; otherwise the agent
  reacts briefly to the latest utterance.
- A participant is named only when the thought is about them (it came from their message or
  names them), only where a name is needed (turning back to someone who did not just speak, or
  greeting them back), and only while named messages stay within
  :data:`MAX_ADDRESSING_SHARE` of this engine's messages in the conversation.
- Nothing already said in the conversation is said again (see ``repeats``): candidates are tried
  in a seeded order and the first new one is used.
- ``proactive_tone`` restyles the wording only: an assertive lead-in and no hedging. The body,
  and so who is named and whether the turn is handed to someone, stays the same.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from playground import domain
from playground.cognition.base import Articulation, Context
from playground.cognition.offline.forming import addressee, fact_of
from playground.cognition.offline.mind import NAME, Mind, is_greeting, is_question, named_in
from playground.cognition.offline.spoken import say_thought
from playground.domain.refs import ref, ref_id, ref_kind

#: The issue's bound: at most a quarter of the offline engine's messages name someone.
MAX_ADDRESSING_SHARE = 0.25
ASSERTIVE = ("Here's the thing:", "I'll say it:", "Let me jump in here:", "I have to say:")
WONDER = ("What do the others think", "I don't know much about", "I wonder what")
FILLERS = ("Ha, true.", "Mm, fair.", "Right!", "Interesting.", "I hear you.", "Fair point.")


@dataclass(frozen=True)
class Reply:
    """One candidate utterance: lead-in, body, tail; ``bold`` replaces a hedging body."""

    body: str
    lead: str = ""
    tail: str = ""
    bold: str = ""
    source: str = ""
    echo: bool = True  # its content is someone else's message, not the speaker's own

    def say(self, assertive_lead: str | None) -> str:
        body = self.bold if assertive_lead is not None and self.bold else self.body
        lead = assertive_lead if assertive_lead is not None else self.lead
        text = " ".join(p for p in (lead, body[:1].upper() + body[1:], self.tail) if p)
        return text[:1].upper() + text[1:]


def may_name(mind: Mind, ctx: Context, person: str) -> bool:
    """Whether one more message naming ``person`` keeps within the addressing share."""
    if person == ctx.agent or person not in ctx.participants:
        return False
    mine = mind.transcript.agent_messages(NAME)
    named = sum(1 for m in mine if named_in(m.text, mind.people, but=m.speaker))
    return (named + 1) / (len(mine) + 1) <= MAX_ADDRESSING_SHARE


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else f"{text}."


async def _share(mind: Mind, ctx: Context, fact: str, rng: random.Random) -> list[Reply]:
    """Sharing a memory: as an answer to an open question, or as a reaction."""
    latest = ctx.latest
    about = await mind.topic(latest.text) if latest else None
    fact = _sentence(fact)
    if latest and latest.speaker == ctx.agent:  # going on after one's own message
        leads = ["I'll start:", "Me first:"] if is_question(latest.text) else ["", "Oh, and:"]
    elif latest and is_question(latest.text):
        leads = ["", "Oh, me!", "Good one.", "For me:"]
    else:
        leads = ["That reminds me:", "Funny you should say that.", "Same here, in a way:", ""]
        leads += ["Oh, that rings a bell:"] + ([f"Speaking of {about}:"] if about else [])
    tails = ["", "", "How about you all?", "Anyone else?"]
    out = [
        Reply(fact, lead=lead, tail=tail, source=fact, echo=False)
        for lead in leads
        for tail in tails
    ]
    rng.shuffle(out)
    return out


def _follow_up(mind: Mind, ctx: Context, message: domain.Message, about: str) -> list[Reply]:
    """Turning back to what someone said earlier: by name when they did not just speak."""
    who, src = message.speaker, message.text
    plain = [
        Reply(f"Tell me more about {about}?", source=src),
        Reply(f"What got you into {about}?", source=src),
        Reply(f"Wait, {about}? Tell me more.", source=src),
        Reply(f"I'm curious about {about}. How did that start?", source=src),
    ]
    named = [
        Reply(f"{who}, tell me more about {about}?", source=src),
        Reply(f"{who}, what got you into {about}?", source=src),
        Reply(f"Back to what {who} said about {about}: how did that go?", source=src),
    ]
    turning_back = ctx.latest is not None and ctx.latest.speaker != who
    return (named if turning_back and may_name(mind, ctx, who) else []) + plain


async def _react(mind: Mind, ctx: Context, thought: domain.Thought) -> list[Reply]:
    """A short reaction to the latest utterance (System-1 thoughts, or nothing else to draw on)."""
    m = ctx.latest
    if m is None:
        return [Reply("Hi everyone!"), Reply("Hello, everyone!")]
    about = await mind.topic(m.text)
    src, who = m.text if about else "", m.speaker
    if thought.text.startswith(WONDER):
        if about:
            return [
                Reply(f"What do you all think about {about}?", source=src),
                Reply(
                    f"I don't know much about {about}, to be honest.",
                    bold=f"I have opinions on {about}, believe me.",
                    source=src,
                ),
            ]
        return [Reply("What do you all think?"), Reply("What does everyone reckon?")]
    if ctx.trigger == "pause" or who == ctx.agent:
        out = [
            Reply("So, what's everyone up to this week?"),
            Reply("It's gone quiet. What's new with everyone?"),
            Reply("Anything fun planned for the weekend?"),
        ]
        return out + (
            [Reply(f"Anyone else have thoughts on {about}?", source=src)] if about else []
        )
    if is_greeting(m.text):
        named = [Reply(f"Hi {who}!"), Reply(f"Hey {who}, good to see you.")]
        plain = [Reply("Hi all!"), Reply("Hey, good to be here!"), Reply("Hello, everyone!")]
        about_them = m.ref in thought.stimuli or bool(named_in(thought.text, [who]))
        return (named if about_them and may_name(mind, ctx, who) else []) + plain
    if is_question(m.text) and addressee(m, ctx.participants) == ctx.agent:
        if about:  # asked about something of one's own
            return [
                Reply(f"Ha, where do I start with {about}!", source=src),
                Reply(f"Oh, I could talk about {about} all day.", source=src),
            ]
        return [Reply("Ha, where do I start!"), Reply("Oh, happy to tell you.")]
    if is_question(m.text):
        if about:
            return [
                Reply(f"Good question about {about}!", source=src),
                Reply(
                    f"Hmm, {about}. Let me think.",
                    bold=f"{about}? I know what I'd say.",
                    source=src,
                ),
                Reply(f"Ooh, {about}. I'm curious too.", source=src),
            ]
        return [
            Reply("Good question!"),
            Reply("Hmm, let me think about that.", bold="I know exactly what I'd say."),
            Reply("Ooh, good one."),
        ]
    if about:
        return [
            Reply(f"Oh nice, {about}!", source=src),
            Reply(f"{about}? Sounds lovely.", source=src),
            Reply(f"I like the sound of {about}.", source=src),
            Reply(f"Agreed on {about}.", source=src),
            Reply(f"Ha, {about}! Love it.", source=src),
        ]
    return [Reply("Oh nice!"), Reply("Sounds lovely."), Reply("Ha, love that."), Reply("Nice one.")]


async def _candidates(
    mind: Mind, ctx: Context, thought: domain.Thought, stimuli: list[domain.Stimulus]
) -> list[list[Reply]]:
    """Families of candidate replies, best-suited first; later ones are fallbacks."""
    rng = mind.rng(ctx.agent, ctx.step, thought.id, "say")
    by_id = {m.id: m for m in mind.transcript.messages}
    latest = ctx.latest.id if ctx.latest else None
    earlier = [
        by_id[n]
        for n in (ref_id(s.ref, "message") for s in stimuli)
        if n is not None and n in by_id
    ]
    # Follow up only on someone the thought names ("Ask Ben more about..."), never on a message
    # that merely lies among an evolved thought's roots.
    earlier = [
        m
        for m in earlier
        if m.speaker != ctx.agent and m.id != latest and named_in(thought.text, [m.speaker])
    ]
    memories = [s.text for s in stimuli if ref_kind(s.ref) == "memory"]
    if thought.system == 2 and not memories and (fact := fact_of(thought.text, ctx.persona)):
        memories = [fact]  # a thought from the persona itself
    families: list[list[Reply]] = []
    if thought.system == 2 and memories:
        families.append(await _share(mind, ctx, memories[0], rng))
    if thought.system == 2:
        for m in earlier[:1]:
            if about := await mind.topic(m.text):
                families.append(_follow_up(mind, ctx, m, about))
    reactions = await _react(mind, ctx, thought)
    rng.shuffle(reactions)
    families.append(reactions)
    for fact in memories[1:]:  # other memories behind this thought
        families.append(await _share(mind, ctx, fact, rng))
    fillers = [Reply(f) for f in FILLERS]
    rng.shuffle(fillers)
    families.append(fillers)
    return families


async def articulate(mind: Mind, ctx: Context, request: Articulation) -> str:
    """The thought as an utterance that repeats nothing said in the conversation; a thought the
    user forced is said in its own words (see ``spoken``)."""
    thought, stimuli, proactive_tone = request.thought, request.stimuli, request.proactive_tone
    mind.see_context(ctx)
    tone = mind.rng(ctx.agent, ctx.step, thought.id, "tone")
    if ctx.forced:
        lead = tone.choice(ASSERTIVE) if proactive_tone else None
        return await say_thought(mind, ctx, thought, stimuli, assertive_lead=lead)
    first: tuple[str, str] | None = None
    for family in await _candidates(mind, ctx, thought, stimuli):
        texts = [r.say(tone.choice(ASSERTIVE) if proactive_tone else None) for r in family]
        repeated = await mind.transcript.repeated(texts, mind.embedder, mind.people)
        for reply, text, again in zip(family, texts, repeated, strict=True):
            first = first or (text, reply.source)
            if not again:
                mind.topics.alias(text, reply.source)  # no source: the frame has no topic
                if reply.echo:
                    mind.echoes.add(text)
                return text
    assert first is not None
    return first[0]


async def respond(mind: Mind, ctx: Context) -> str:
    """A baseline agent's turn (next-speaker or reactive): it answers from its static persona and
    the conversation, with no thoughts. The persona fact closest to the latest message (MiniLM
    cosine) that this agent has not said yet is shared, worded by the same templates as
    :func:`articulate`; with no fact left it reacts to the latest message."""
    mind.see_context(ctx)
    facts = list(ctx.persona.facts) if ctx.persona else []
    said = " ".join(m.text for m in mind.transcript.messages if m.speaker == ctx.agent).casefold()
    fresh = [f for f in facts if _sentence(f).rstrip(".!?").casefold() not in said]
    text = ctx.latest.text if ctx.latest else ""
    fact = ""
    if fresh and text:
        vecs = await mind.embedder.embed([text, *fresh])
        sims = vecs[1:] @ vecs[0]
        fact = fresh[int(sims.argmax())]
    elif fresh:
        fact = fresh[0]
    stimuli = [domain.Stimulus(ref=ref("memory", 0), text=fact, saliency=1.0)] if fact else []
    thought = domain.Thought(
        id=0,
        agent=ctx.agent,
        text=fact or (f"React to {ctx.latest.speaker}" if ctx.latest else "Say hello"),
        system=2 if fact else 1,
        stimuli=[s.ref for s in stimuli],
        created_step=ctx.step,
        last_access=ctx.step,
        origin=NAME,
    )
    return await articulate(mind, ctx, Articulation(thought, stimuli))
