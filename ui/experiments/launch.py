"""Turning the window's options into an experiment, and running one on the GUI's asyncio loop.

The protocol is built by the same function as ``playground experiment``'s
(:func:`playground.experiments.protocol.build_protocol`), so the same options in the window and on
the command line give the same experiment id, and either one resumes the other's experiment.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from PySide6.QtCore import QObject, QTimer, Signal

from playground import domain, errors
from playground.embedding.cache import CachingEmbedder
from playground.experiments import results
from playground.experiments import runner as experiment
from playground.experiments.protocol import ExperimentProtocol, build_protocol
from playground.settings import Settings, load_settings
from playground.urls import redact
from ui.jobs.loop_job import LoopJob

log = logging.getLogger(__name__)

EngineChoice = Literal["offline", "openai"]


@dataclass(frozen=True)
class Options:
    """What the New experiment dialog asks for: ``playground experiment``'s options."""

    conditions: tuple[domain.Policy, ...]
    conversations: int
    agents: int
    turns: int
    seed: int
    personas_dir: str
    concurrency: int
    name: str | None
    engine: EngineChoice


@dataclass(frozen=True)
class Plan:
    """An experiment ready to run: its protocol and the settings of its engine."""

    protocol: ExperimentProtocol
    settings: Settings
    concurrency: int
    name: str | None

    @property
    def experiment_id(self) -> str:
        return self.protocol.experiment_id


def experiment_settings(
    base: Settings,
    environ: Mapping[str, str],
    *,
    engine: EngineChoice,
    model: str | None = None,
    base_url: str | None = None,
) -> Settings:
    """The settings an experiment runs with: the window's server, model, key, timeouts and
    embeddings, with the paper's simulation preset and per-thought evaluation.

    Raises:
        SettingsError: naming the setting that is wrong.
    """
    key = base.llm.api_key.get_secret_value() if base.llm.api_key else None
    return load_settings(
        environ,
        {
            "engine": engine,
            "model": model or base.llm.model,
            "base_url": base_url or base.llm.base_url,
            "api_key": key,
            "timeout": base.llm.timeout,
            "max_retries": base.llm.max_retries,
            "concurrency": base.llm.concurrency,
            "adaptive_concurrency": base.llm.adaptive_concurrency,
            "pins": dict(base.llm.pins) or None,
            "rating_method": base.engine.rating_method,
            "rating_samples": base.engine.rating_samples,
            "rating_call": base.engine.rating_call,
            "embedding_model": base.llm.embedding_model,
            "embeddings": base.engine.embeddings,
            "preset": experiment.PRESET,
            "evaluation_mode": experiment.EVALUATION_MODE,
        },
    )


def plan_new(options: Options, base: Settings, environ: Mapping[str, str]) -> Plan:
    """A new experiment (or an existing one with exactly these options, which then resumes).

    Raises:
        SettingsError: an option out of range, or a bad engine setting; PersonaError: a bad
            persona file in the chosen directory.
    """
    if options.concurrency < 1:
        raise errors.SettingsError(f"concurrency: must be at least 1 (got {options.concurrency})")
    settings = experiment_settings(base, environ, engine=options.engine)
    protocol = build_protocol(
        settings,
        conditions=options.conditions,
        conversations=options.conversations,
        agents=options.agents,
        turns=options.turns,
        seed=options.seed,
        personas_dir=options.personas_dir,
    )
    return Plan(protocol, settings, options.concurrency, options.name or None)


def stored_protocol(db: Any, experiment_id: str) -> ExperimentProtocol:
    """The protocol an experiment was created with, read back from the database (its personas
    and icebreakers included, so it resumes even if the persona files changed since).

    Raises:
        PlaygroundError: no such experiment, or its stored protocol cannot be read.
    """
    stored = results.stored_config(db, experiment_id)
    if stored is None:
        raise errors.PlaygroundError(f"no experiment {experiment_id!r} in this database")
    try:
        config = json.loads(stored or "{}")
        if isinstance(config, dict) and config.get("kind") == "storm":
            raise errors.PlaygroundError(
                f"experiment {experiment_id} is a batch of STORM dialogues; resume it from the"
                " command line by running the same `playground storm` command again"
            )
        protocol = ExperimentProtocol.model_validate(config["protocol"])
    except (ValueError, KeyError, TypeError) as exc:
        raise errors.PlaygroundError(
            f"experiment {experiment_id}: its stored protocol cannot be read ({exc})"
        ) from exc
    if protocol.experiment_id != experiment_id:
        raise errors.PlaygroundError(
            f"experiment {experiment_id}: its stored protocol gives the id"
            f" {protocol.experiment_id}; it was written by another version and cannot be resumed"
            " from here"
        )
    return protocol


def plan_resume(
    db: Any, experiment_id: str, base: Settings, environ: Mapping[str, str], concurrency: int
) -> Plan:
    """Rerun a stored experiment's protocol: the runner skips its finished conversations.

    The engine is the experiment's own (offline, or its model at its server); the API key is the
    window's (keys are never stored). A server address whose credentials were redacted when it
    was stored is taken from the window when it names the same server.

    Raises:
        PlaygroundError: no such experiment or an unreadable protocol; SettingsError: a bad
            engine setting.
    """
    protocol = stored_protocol(db, experiment_id)
    engine: EngineChoice = "offline" if protocol.engine == "offline" else "openai"
    base_url = protocol.base_url
    if base.llm.base_url and redact(base.llm.base_url) == base_url:
        base_url = base.llm.base_url
    settings = experiment_settings(
        base,
        environ,
        engine=engine,
        model=None if engine == "offline" else protocol.model,
        base_url=None if engine == "offline" else base_url,
    )
    return Plan(protocol, settings, concurrency, None)


class ExperimentRun(LoopJob):
    """One experiment running (or resuming) as a task on the GUI's loop.

    The engine is built with the window's shared embedding model, which loads in its own
    thread. Progress is re-emitted at most every ``interval_ms``, so a batch of fast offline
    conversations never floods the window with repaints. ``ended`` gives the outcome
    ("finished", "cancelled", "error") and the message.

    Args:
        db: the session database.
        plan: what to run.
        embedder: returns the window's shared, loaded local embedding model.
        interval_ms: the most often ``progress_changed`` is emitted.
    """

    progress_changed = Signal(object)  # experiment.Progress

    def __init__(
        self,
        db: Any,
        plan: Plan,
        embedder: Callable[[], Awaitable[CachingEmbedder]],
        *,
        interval_ms: int = 200,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(db, embedder, parent)
        self.plan = plan
        self.experiment_id = plan.experiment_id
        self.runner: experiment.Runner | None = None
        self._cancel_requested = False
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._flush)

    @property
    def progress(self) -> experiment.Progress | None:
        return self.runner.progress if self.runner is not None else None

    def _started(self, task: asyncio.Task[None]) -> None:
        self._timer.start()

    def cancel(self) -> None:
        """Stop: no new conversation starts and those in flight end ``interrupted``."""
        self._cancel_requested = True
        if self.runner is not None:
            self.runner.cancel()
        elif self.task is not None and not self.task.done():
            self.task.cancel()  # still loading the model or connecting: nothing was run yet

    def _on_progress(self, _progress: experiment.Progress) -> None:
        self._dirty = True

    def _flush(self) -> None:
        if self._dirty and self.runner is not None:
            self._dirty = False
            self.progress_changed.emit(self.runner.progress)

    async def _main(self) -> None:
        try:
            engine = await self._engine(self.plan.settings)
            try:
                if self._cancel_requested:
                    raise asyncio.CancelledError
                self.runner = experiment.Runner(
                    self.db,
                    self.plan.protocol,
                    self.plan.settings,
                    engine,
                    concurrency=self.plan.concurrency,
                    name=self.plan.name,
                    on_progress=self._on_progress,
                )
                progress = await self.runner.run()
            finally:
                await engine.close()
            failed = sum(c.failed for c in progress.conditions.values())
            if self.runner.cancelled:
                self._end("cancelled", _cancelled_text(progress))
            else:
                text = f"Experiment {self.experiment_id} finished"
                text += (
                    f": {failed} conversation{'s' if failed != 1 else ''} failed (see their"
                    " errors below); Resume runs them again."
                    if failed
                    else "."
                )
                self._end("finished", text)
        except asyncio.CancelledError:
            progress_now = self.progress
            self._end(
                "cancelled",
                _cancelled_text(progress_now)
                if progress_now
                else "Cancelled before any conversation started.",
            )
        except errors.PlaygroundError as exc:
            self._end("error", f"Experiment {self.experiment_id}: {exc}")
        except Exception as exc:
            # The GUI boundary: an unexpected bug is logged and shown, the window stays usable.
            log.exception("experiment %s failed", self.experiment_id)
            self._end(
                "error",
                f"Experiment {self.experiment_id} failed unexpectedly: {type(exc).__name__}: {exc}",
            )

    def _end(self, outcome: str, message: str) -> None:
        self._timer.stop()
        self.outcome, self.message = outcome, message
        if self.runner is not None:
            self.progress_changed.emit(self.runner.progress)
        self.ended.emit(outcome, message)


def _cancelled_text(progress: experiment.Progress) -> str:
    left = progress.total - progress.finished
    return (
        f"Experiment {progress.experiment_id} cancelled: {progress.finished}/{progress.total}"
        f" conversations done; the {left} left (those in flight saved as interrupted) run when"
        " you press Resume."
    )
