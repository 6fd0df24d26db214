"""The paper's keyword maps (STORM appendix L.2–L.5): emotion and intent read from plain text.

They are the fallback when a simulated user's answer leaves out its emotion or intent: the maps
for inner thoughts (L.4, L.5) read the private text, the maps for messages (L.2, L.3) the visible
one. The keyword lists are the paper's; labels are lower-case.

Matching is case-insensitive on whole words (a keyword never matches inside a longer word); the
label with the most matching keywords wins, ties going to the label listed first.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping


def _k(keywords: str) -> tuple[str, ...]:
    return tuple(k.strip() for k in keywords.split(","))


#: L.2: emotion from a visible message.
MESSAGE_EMOTIONS: Mapping[str, tuple[str, ...]] = {
    "happy": _k(
        "happy, excited, great, wonderful, perfect, love, like, joy, pleased, delighted, thrilled, glad, enjoying, satisfied, positive"
    ),
    "frustrated": _k(
        "frustrated, annoyed, upset, angry, disappointed, not happy, irritated, bothered, fed up, aggravated, displeased, impatient, agitated, exasperated"
    ),
    "confused": _k(
        "confused, not sure, don't understand, unclear, complicated, puzzled, perplexed, lost, unsure, bewildered, disoriented, uncertain, ambiguous"
    ),
    "interested": _k(
        "interesting, tell me more, could you explain, how does, intrigued, curious, fascinated, engaged, captivated, keen, eager, want to know"
    ),
    "skeptical": _k(
        "really?, are you sure, is that true, not convinced, doubtful, suspicious, unconvinced, questioning, dubious, disbelieving, hard to believe"
    ),
    "neutral": _k(
        "okay, alright, fine, good, yes, no, sure, maybe, possibly, perhaps, hmm, i see, understood, noted"
    ),
    "anxious": _k(
        "worried, nervous, anxious, concerned, uneasy, apprehensive, stressed, tense, troubled, afraid, fearful, panicked, alarmed"
    ),
    "grateful": _k(
        "thank you, thanks, appreciate, grateful, thankful, indebted, obliged, appreciative, recognition, acknowledging, gratitude"
    ),
    "surprised": _k(
        "wow, oh, really, surprising, unexpected, shocked, amazed, astonished, startled, stunned, taken aback, incredible, unbelievable"
    ),
    "disappointed": _k(
        "disappointed, letdown, shame, too bad, unfortunate, regret, unsatisfactory, dismayed, disheartened, unfulfilled, discontented"
    ),
    "hopeful": _k(
        "hope, looking forward, anticipate, optimistic, excited about, expecting, anticipated, promising, encouraging, reassuring, positive outlook"
    ),
}

#: L.3: intent from a visible message.
MESSAGE_INTENTS: Mapping[str, tuple[str, ...]] = {
    "exploring": _k(
        "looking for, interested in, tell me about, what are, show me, find, search for, discover, learn about, explain, describe, overview of, information on, curious about"
    ),
    "comparing": _k(
        "difference between, which is better, compare, versus, vs, pros and cons, advantages of, disadvantages of, similarities, contrasting, how does it compare, better choice, alternatives to"
    ),
    "deciding": _k(
        "should i, which one, recommend, suggestion, advise, what would you choose, best option, worth it, good choice, help me decide, make a decision, right for me, considering"
    ),
    "confirming": _k(
        "are you sure, is that right, does it have, can it, verify, confirm, is it true, really, actually, definitely, guarantee, promise, certain, double-check"
    ),
    "purchasing": _k(
        "how much, price, buy, purchase, cost, ordering, payment, discount, sale, shipping, availability, in stock, checkout, add to cart, where can i get"
    ),
    "leaving": _k(
        "thank you, goodbye, bye, see you, thanks, appreciate it, that's all, ending, finished, done, chat later, signing off, talk later"
    ),
    "troubleshooting": _k(
        "problem, issue, not working, error, fix, help me with, troubleshoot, broken, stuck, won't work, doesn't work, failed, bugs, glitches"
    ),
    "requesting": _k(
        "can you, could you, please, would you, need you to, want you to, help me, assist me, i'd like you to, request, favor"
    ),
    "expressing satisfaction": _k(
        "great, awesome, perfect, excellent, wonderful, love it, satisfied, happy with, good job, well done, thanks, appreciate"
    ),
    "expressing dissatisfaction": _k(
        "disappointed, unhappy, not satisfied, didn't work, not good, terrible, awful, frustrated, upset, not what i wanted, dislike"
    ),
    "inquiring": _k(
        "how do i, how to, steps to, guide for, tutorial, instructions, process of, way to, method for, approach to"
    ),
    "clarifying": _k(
        "what do you mean, don't understand, confused, unclear, elaborate, explain more, clarify, be more specific, meaning of, rephrase"
    ),
}

#: L.4: the real, often implicit intent, from inner thoughts.
INNER_INTENTS: Mapping[str, tuple[str, ...]] = {
    "exploring": _k(
        "need information, want to know, curious, just browsing, researching, gathering info, learning, understand, figure out, not sure yet, looking into"
    ),
    "comparing": _k(
        "weighing options, pros and cons, better choice, similarities, differences, alternatives, compare, contrast, evaluation, weigh, prefer, which one is better"
    ),
    "deciding": _k(
        "almost ready, need to decide, make up my mind, making a choice, leaning towards, considering, thinking about getting, might choose, on the fence, close to deciding"
    ),
    "confirming": _k(
        "double-check, verify, make sure, confirm, reassurance, validate, certain, correct information, trust but verify, need proof, skeptical"
    ),
    "purchasing": _k(
        "ready to buy, want to purchase, where to buy, looking to get, willing to pay, budget, cost concerns, spend money, deal, bargain, checkout"
    ),
    "leaving": _k(
        "need to go, end this, wrap up, moving on, done here, finished, that's all i needed, got what i came for, time to leave, goodbye"
    ),
    "resisting": _k(
        "not telling everything, hiding my real goal, being vague on purpose, not revealing, keeping cards close, holding back, secretly want, actual intention, real reason"
    ),
    "testing": _k(
        "testing their knowledge, seeing if they know, checking competence, pushing to see response, challenging, probing, testing limits, seeing if capable"
    ),
    "manipulating": _k(
        "get them to, convince them, make them think, lead them to believe, appear as if, trick, misdirection, real agenda, hidden motive, strategic"
    ),
    "distrusting": _k(
        "don't believe, skeptical, not sure i trust, dubious, suspicious, questionable, doubt, can't trust, not convinced, wary of, hesitant"
    ),
    "regretting": _k(
        "should have asked, forgot to mention, didn't say, wish i had, too late now, missed opportunity, should have been clearer, miscommunicated, not what i meant"
    ),
    "hesitating": _k(
        "nervous about, afraid to ask, hesitant, uncertain, reluctant, apprehensive, can't decide, overthinking, worried, anxious, reservations"
    ),
}

#: L.5: the true private emotion, from inner thoughts.
INNER_EMOTIONS: Mapping[str, tuple[str, ...]] = {
    "happy": _k(
        "happy inside, secretly pleased, actually like, genuinely excited, truly happy, satisfied with, enjoying this, pretty good, pleased, delighted"
    ),
    "frustrated": _k(
        "so annoying, ticks me off, irritating, getting on my nerves, frustrated with, tired of this, fed up, had enough, irritated, annoyed with"
    ),
    "confused": _k(
        "totally lost, no idea what, makes no sense, can't follow, hard to understand, over my head, confusing, complicated, don't get it, puzzled by"
    ),
    "interested": _k(
        "actually interested, curious about, want to know more, intriguing, grabbed my attention, need more details, fascinating, captivated by"
    ),
    "skeptical": _k(
        "don't believe, seems fishy, not buying it, doubt that, suspicious of, questioning, not convinced, seems too good, not trustworthy"
    ),
    "neutral": _k(
        "whatever, don't care, indifferent, not invested, no opinion, neutral on this, doesn't matter, makes no difference"
    ),
    "anxious": _k(
        "worried about, nervous that, anxiety, concerned, stressing me out, freaking out, panicking, on edge, uncomfortable, uneasy about"
    ),
    "impatient": _k(
        "hurry up, taking too long, waste of time, get to the point, move on, want this to be over, dragging on, drawn out, tedious"
    ),
    "insecure": _k(
        "not smart enough, look stupid, embarrassed, out of my depth, inadequate, incompetent, self-conscious, exposed, vulnerable, judged"
    ),
    "hopeful": _k(
        "fingers crossed, hope this works, maybe this will help, hoping for, optimistic, looking forward to, anticipating, excited for"
    ),
    "desperate": _k(
        "really need this, out of options, last resort, critical, urgent, dire, running out of time, no choice, have to make this work"
    ),
    "conflicted": _k(
        "torn between, mixed feelings, unsure which, conflicted about, ambivalent, on the fence, contradictory feelings, divided, split"
    ),
    "pretending": _k(
        "acting like, pretending to, faking, putting on a show, not showing how i feel, hiding my, masking my, concealing, not letting on"
    ),
    "resentful": _k(
        "unfair, not my fault, blame, resentful, bitter about, grudge, holding against, not forgetting, still angry about"
    ),
}

#: What the fallback says when no keyword of either map matches (documented in the README).
DEFAULT_EMOTION = "neutral"
DEFAULT_INTENT = "exploring"


@functools.cache
def _pattern(keyword: str) -> re.Pattern[str]:
    # Curly apostrophes are common in model output; the maps use straight ones.
    return re.compile(r"(?<!\w)" + re.escape(keyword) + r"(?!\w)", re.IGNORECASE)


def _normalise(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


def match(text: str, table: Mapping[str, tuple[str, ...]]) -> str | None:
    """The label of ``table`` whose keywords occur most often in ``text``; None when none does.

    Args:
        text: any text (a message or inner thoughts).
        table: one of the four maps of this module.
    """
    text = _normalise(text)
    if not text.strip():
        return None
    best, best_hits = None, 0
    for label, keywords in table.items():
        hits = sum(1 for k in keywords if _pattern(k).search(text))
        if hits > best_hits:
            best, best_hits = label, hits
    return best


def infer_emotion(message: str, inner_thoughts: str) -> str:
    """Emotion from the keyword maps: the inner thoughts first (L.5), then the message (L.2),
    else :data:`DEFAULT_EMOTION`."""
    return (
        match(inner_thoughts, INNER_EMOTIONS) or match(message, MESSAGE_EMOTIONS) or DEFAULT_EMOTION
    )


def infer_intent(message: str, inner_thoughts: str) -> str:
    """Intent from the keyword maps: the inner thoughts first (L.4), then the message (L.3),
    else :data:`DEFAULT_INTENT`."""
    return match(inner_thoughts, INNER_INTENTS) or match(message, MESSAGE_INTENTS) or DEFAULT_INTENT
