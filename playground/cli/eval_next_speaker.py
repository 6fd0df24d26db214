"""``playground eval-next-speaker``: score the next-speaker predictor on a corpus of group chats.

The corpus, the predictions and the scores are :mod:`playground.experiments.next_speaker_eval`'s;
this module adds the command's flags, builds the settings from them (at temperature 0) and
prints the scores as a table or JSON.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from playground import domain, errors
from playground.cli import signals as interrupts
from playground.cli.flag_ranges import COUNT, LLM_CALLS
from playground.cli.flags import LLM_FLAGS, add_llm_flags, settings_from
from playground.settings import Settings

#: Flags of the command for the settings they set, so a bad value names the flag typed.
SETTING_FLAGS = {**LLM_FLAGS, "concurrency": "--concurrency"}


def add_parser(sub: Any) -> None:
    """Add ``eval-next-speaker`` to the subcommands ``sub``."""
    ev = sub.add_parser(
        "eval-next-speaker",
        help="score the next-speaker predictor on a corpus of multi-party chats (docs/next-speaker-corpus.md)",
    )
    ev.add_argument("corpus", metavar="CORPUS.jsonl")
    add_llm_flags(ev)
    ev.add_argument("--limit", type=COUNT, metavar="N", help="score at most N predictions")
    ev.add_argument("--concurrency", type=LLM_CALLS, help="most LLM calls in flight at once")
    ev.add_argument("--format", choices=["table", "json"], default="table")


def _settings(args: argparse.Namespace) -> Settings:
    # The most likely answer, every time: an evaluation must not depend on sampling.
    return settings_from(args, SETTING_FLAGS, {"temperature": 0.0})


def cli(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``playground eval-next-speaker`` to the end (its own event loop; Ctrl-C stops it cleanly).

    Args:
        args: ``corpus``, ``engine``, ``model``, ``base_url``, ``api_key``, ``limit``, ``format``
            (``table`` or ``json``), ``timeout``, ``max_retries``, ``concurrency``.
        out: the result goes here.
        err: progress notes go here.

    Returns:
        0 when the evaluation ran; 128 + the signal when SIGINT or SIGTERM stopped it.

    Raises:
        CorpusError: the corpus cannot be read or has a bad line.
        SettingsError: a flag's value is invalid (``--limit`` below 1, a bad ``--base-url``...).
        LLMError: the server cannot be used (unreachable, key refused...).
    """
    return interrupts.run_interruptible(run(args, out, err), err)


async def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The command's work, as a coroutine (see :func:`cli`).

    Raises:
        CorpusError, SettingsError, LLMError: as :func:`cli`.
    """
    # The predictor and the offline engine only once the command runs, not to build the parser.
    from playground.cognition.offline import mind
    from playground.experiments.next_speaker_corpus import CorpusError, items, read_corpus
    from playground.experiments.next_speaker_eval import (
        predict_llm,
        predict_offline,
        render_table,
        score,
        score_notes,
        to_json,
    )

    limit = getattr(args, "limit", None)
    if limit is not None and limit < 1:
        raise errors.SettingsError(f"--limit: must be at least 1 (got {limit})", field="limit")
    settings = _settings(args)
    conversations = read_corpus(args.corpus)
    todo = items(conversations, limit=limit)
    if not todo:
        raise CorpusError(
            args.corpus, 0, "", "no conversation has two messages: there is nothing to predict"
        )
    usage: domain.Usage | None = None
    if settings.engine.engine == "offline":
        outcomes = await predict_offline(todo)
        engine, model, predictor = "offline", mind.NAME, "offline engine (heuristic)"
    else:
        from playground import factory  # the openai SDK only when a server is used

        client = factory.make_chat_client(settings)
        try:
            print(f"Asking {client.model} at {client.where}…", file=err, flush=True)
            await client.probe()  # one cheap call: a wrong URL or key fails once, clearly
            outcomes = await predict_llm(
                client,
                todo,
                workers=settings.llm.concurrency,
                method=settings.engine.rating_method,
                samples=settings.engine.rating_samples,
            )
            usage = client.usage
        finally:
            await client.close()
        engine, model, predictor = "openai", settings.llm.model, settings.llm.model
    scores = score(outcomes)
    corpus = str(args.corpus)
    if getattr(args, "format", "table") == "json":
        json.dump(
            to_json(
                scores,
                outcomes,
                corpus=corpus,
                engine=engine,
                model=model,
                conversations=len({it.conversation for it in todo}),
                usage=usage,
            ),
            out,
            indent=2,
            ensure_ascii=False,
        )
        print(file=out)
        return 0
    notes = score_notes(scores)
    if usage is not None:
        notes.append(f"LLM use: {usage.calls_text()}.")
    print(
        render_table(
            scores,
            corpus=corpus,
            predictor=predictor,
            conversations=len({it.conversation for it in todo}),
            notes=notes,
        ),
        file=out,
    )
    return 0
