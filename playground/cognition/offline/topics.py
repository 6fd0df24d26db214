"""Topic phrases: KeyBERT on the MiniLM model the engine already has, cached per text.

Candidates are runs of content words (no stop word, name, contraction or short word inside a
run, and none spanning punctuation), as one- and two-word phrases; KeyBERT ranks them by cosine
similarity to the whole text. Every vector comes from the engine's own cached embedder, so no
model is loaded or downloaded, and each distinct text and phrase is embedded once.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from playground import errors
from playground.embedding.cache import CachingEmbedder


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


WORD = re.compile(r"[^\W\d_][\w'-]*")
MAX_WORDS = 2
#: A phrase less similar than this to its text says little about it ("good" in "Anyone listening
#: to something good lately?"): a text whose best phrase falls below has no topic.
MIN_SCORE = 0.3
#: Closed-class words after which English puts a verb ("I *grow* leeks", "to *hike*", "did you
#: *try*"): the first word of a phrase that follows one of them is not part of a noun phrase.
VERB_CUES = _words(
    "i you we they he she it who anyone everyone someone nobody do does did don't doesn't "
    "didn't will would can could should shall may might must to am is are was were be been "
    "have has had i'm i've i'll i'd you're we're they're let's let please"
)
#: Adverbs that may stand between such a word and its verb ("I *once* taught").
ADVERBS = _words(
    "once always never often also just really even still usually sometimes ever already all "
    "both each almost"
)
#: Function words that scikit-learn's list lacks: prepositions, hedges, vague nouns, and words
#: that point at a time relative to now. None of them names a topic ("more about today?").
FUNCTION = _words(
    "beneath inside like near outside past till underneath despite unlike far just really quite "
    "pretty usually maybe probably actually literally basically honestly totally super kinda lot "
    "lots bit thing things stuff way now today tonight tomorrow yesterday lately recently"
)
#: Object pronouns: a word right before one is a verb ("*tell* me", "*taught* me").
OBJECTS = _words("me us him her them you it")
#: One thread of our own for the one-off imports (KeyBERT imports take about a second): the
#: event loop never blocks on them, and under qasync the loop's default executor is not used.
_LOADER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="keybert")
_STOP: frozenset[str] | None = None


def stop_words() -> frozenset[str]:
    """scikit-learn's English stop-word list (the one KeyBERT uses by default)."""
    global _STOP
    if _STOP is None:
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        _STOP = frozenset(ENGLISH_STOP_WORDS)
    return _STOP


def candidates(text: str, exclude: Iterable[str] = ()) -> dict[str, str]:
    """Candidate phrases of ``text``: lower-case key → form to show (a name keeps its capital)."""
    exclude_low = {w.casefold() for w in exclude}
    stop = stop_words() | exclude_low
    hits = list(WORD.finditer(text))
    lows = [h.group(0).strip("'-").casefold() for h in hits]
    runs: list[list[tuple[str, str]]] = [[]]
    verb_next = True  # a sentence may open with a verb ("Tell me...")
    for i, hit in enumerate(hits):
        word, low = hit.group(0).strip("'-"), lows[i]
        before = text[: hit.start()].rstrip()
        if i and text[hits[i - 1].end() : hit.start()].strip():  # punctuation ends a phrase
            runs.append([])
            verb_next = before.endswith((".", "!", "?", ":"))
        opens_sentence = not before or before[-1] in ".!?:"
        # A capital inside a sentence marks a name, whatever the word ("the Pennine *Way*").
        named = word[0].isupper() and not opens_sentence and low not in exclude_low
        content = len(low) >= 3 and (
            named
            or not (
                "'" in low
                or low in stop
                or low in FUNCTION
                or all(part in stop for part in low.split("-"))  # "sixty-five"
            )
        )
        if content and not named and (verb_next or (i + 1 < len(lows) and lows[i + 1] in OBJECTS)):
            content = False  # a verb: not part of a noun phrase
        if not content:
            runs.append([])
            if low in VERB_CUES:
                verb_next = True
            elif low not in ADVERBS:
                verb_next = False
            continue
        verb_next = False
        runs[-1].append((low, word if named else low))
    out: dict[str, str] = {}
    for run in runs:
        for n in range(1, MAX_WORDS + 1):
            for i in range(len(run) - n + 1):
                part = run[i : i + n]
                out.setdefault(" ".join(w for w, _ in part), " ".join(s for _, s in part))
    return out


class _NoModel:
    """A KeyBERT backend that is never asked to embed: every vector is handed to KeyBERT."""

    def embed(self, documents: Any, verbose: bool = False) -> Any:  # pragma: no cover - guard
        raise errors.PlaygroundError("topic extraction asked KeyBERT to embed by itself")


def _keybert(embedder: CachingEmbedder) -> Any:
    """KeyBERT on the MiniLM model behind ``embedder`` (nothing new is loaded)."""
    from keybert import KeyBERT
    from keybert.backend import BaseEmbedder

    load = getattr(embedder.inner, "load_sync", None)
    if load is not None:

        class Local(BaseEmbedder):  # type: ignore[misc]  # keybert has no types: its base is Any
            def embed(self, documents: Any, verbose: bool = False) -> Any:
                return self.embedding_model.encode(list(documents))

        return KeyBERT(model=Local(embedding_model=load()))

    class Guard(_NoModel, BaseEmbedder):  # type: ignore[misc]  # keybert has no types: Any base
        pass

    return KeyBERT(model=Guard())


class Topics:
    """Key phrases of texts, best first, cached per text.

    Args:
        embedder: the engine's cached embedder (the MiniLM model already loaded for retrieval).
    """

    def __init__(self, embedder: CachingEmbedder) -> None:
        self._embedder = embedder
        self._kw: Any = None
        self._cache: dict[tuple[str, frozenset[str]], list[str]] = {}
        self._alias: dict[str, str] = {}
        self.exclude: frozenset[str] = frozenset()

    @property
    def keybert(self) -> Any:
        """The KeyBERT instance (None until the first extraction)."""
        return self._kw

    def alias(self, utterance: str, source: str) -> None:
        """Take the topics of ``utterance`` (one of our replies) from the content it was built on
        (an empty ``source``: the reply is a bare frame, with no topic)."""
        self._alias[utterance.strip()] = self.source_of(source) if source.strip() else ""

    def source_of(self, text: str) -> str:
        """The content ``text`` was built on (itself unless it is one of our own)."""
        return self._alias.get(text.strip(), text)

    async def phrases(self, text: str, n: int = 2) -> list[str]:
        """At most ``n`` key phrases of ``text``; empty when it has no content word."""
        text = self.source_of(text)
        key = (text, self.exclude)
        if key not in self._cache:
            self._cache[key] = await self._extract(text)
        return self._cache[key][:n]

    async def topic(self, text: str) -> str | None:
        """The best key phrase of ``text``, or None when it has no content word."""
        found = await self.phrases(text, 1)
        return found[0] if found else None

    async def _extract(self, text: str) -> list[str]:
        if self._kw is None:
            loop = asyncio.get_running_loop()
            # torch first: it may still be importing in the model's thread (start-up overlaps the
            # load), and two threads importing torch and scikit-learn at once can each see the
            # other half-initialised.
            load = getattr(self._embedder.inner, "load", None)
            if load is not None:
                await load()
            await loop.run_in_executor(_LOADER, stop_words)
            self._kw = await loop.run_in_executor(_LOADER, _keybert, self._embedder)
        shown = candidates(text, self.exclude)
        if not shown:
            return []
        from sklearn.feature_extraction.text import CountVectorizer

        phrases = list(shown)
        vectorizer = CountVectorizer(analyzer=lambda _doc: phrases).fit([text])
        words = [str(w) for w in vectorizer.get_feature_names_out()]
        doc = await self._embedder.embed([text])
        vecs = await self._embedder.embed(words)
        ranked = self._kw.extract_keywords(
            text,
            vectorizer=vectorizer,
            doc_embeddings=doc,
            word_embeddings=vecs,
            top_n=3,
            use_mmr=True,
            diversity=0.5,
        )
        return [shown[p] for p, score in ranked if score >= MIN_SCORE]
