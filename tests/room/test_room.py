"""Scheduling in the room: bounded concurrency, superseded triggers, stop rules, run control.

Where the question is scheduling, not thinking, the real offline mind is wrapped to add delays and
count concurrent calls (the only wrapped mind in the suite).
"""

import asyncio
from collections import Counter

import pytest

from playground import events
from playground.cognition.offline import OfflineCognition
from playground.room import loops
from playground.room.run_control import RunControl
from playground.settings import PRESETS
from tests.conftest import offline_settings
from tests.support.rooms import build, library, of

pytestmark = pytest.mark.asyncio
QUIET = PRESETS["simulation"].model_copy(
    update={"im_threshold": 5.0, "interrupt_threshold": 5.0, "system1_prob": 0.0}
)


class SlowMind(OfflineCognition):
    """The offline mind, slowed down, counting how many agents form thoughts at once (an agent
    may ask for its System-1 and System-2 thoughts in two calls at once: it counts once)."""

    def __init__(self, embedder, delay: float) -> None:
        super().__init__(embedder, seed=0)
        self.delay = delay
        self.active: Counter[str] = Counter()
        self.peak = 0

    async def form_thoughts(self, ctx, stimuli, *, system1, system2):
        self.active[ctx.agent] += 1
        self.peak = max(self.peak, len(+self.active))
        try:
            await asyncio.sleep(self.delay)
            return await super().form_thoughts(ctx, stimuli, system1=system1, system2=system2)
        finally:
            self.active[ctx.agent] -= 1


async def test_agents_think_concurrently_within_the_bound(embedder):
    mind = SlowMind(embedder, 0.05)
    room, _, _ = await build(
        offline_settings(agent_concurrency=2), embedder, library(4), cognition=mind
    )
    for a in room.agents:  # agents were built with the default mind; point them at the slow one
        a.cognition = mind
    room.add_human("Zoe")
    await room.post_human_message("Zoe", "What did you all do last weekend?")
    await room.step_once()
    assert mind.peak == 2

    mind.peak = 0
    room2, _, _ = await build(
        offline_settings(agent_concurrency=8), embedder, library(4), cognition=mind
    )
    for a in room2.agents:
        a.cognition = mind
    room2.add_human("Zoe")
    await room2.post_human_message("Zoe", "What did you all do last weekend?")
    await room2.step_once()
    assert mind.peak == 4  # all four listeners at once


async def test_a_newer_message_supersedes_work_in_progress(embedder):
    mind = SlowMind(embedder, 0.3)
    settings = offline_settings(pause_seconds=30)
    room, _, seen = await build(settings, embedder, library(3), cognition=mind)
    for a in room.agents:
        a.cognition = mind
    room.add_human("Zoe")
    runner = asyncio.create_task(loops.run_realtime(room))
    await room.post_human_message("Zoe", "What did you do last weekend?")
    await asyncio.sleep(0.1)  # agents are now thinking about message 1
    await room.post_human_message("Zoe", "Actually, forget that: who here likes cooking?")
    for _ in range(200):
        if any(e.message.kind == "ai" for e in of(events.MessagePosted, seen)):
            break
        await asyncio.sleep(0.02)
    room.stop()
    await asyncio.wait_for(runner, 5)
    triggers = of(events.TriggerFired, seen)
    stale_step = next(t.step for t in triggers if t.message_id == 1)
    assert not [e for e in of(events.DecisionMade, seen) if e.decision.step == stale_step], (
        "stale work must never reach a decision"
    )
    replies = [e for e in of(events.MessagePosted, seen) if e.message.kind == "ai"]
    assert replies, "the agents answer the newer message"
    assert all(r.message.step > stale_step for r in replies)


async def test_pause_trigger_fires_after_silence_in_real_time(embedder):
    settings = offline_settings(pause_seconds=0.2, max_silent_steps=2)
    room, _, seen = await build(settings, embedder, library(2))
    for a in room.agents:
        a.proactivity = QUIET
    room.add_human("Zoe")
    runner = asyncio.create_task(loops.run_realtime(room))
    await room.post_human_message("Zoe", "Hello?")
    for _ in range(500):  # however long the agents take to think
        if len(of(events.TriggerFired, seen)) >= 3:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(1.0)  # five more pause periods
    room.stop()
    await asyncio.wait_for(runner, 5)
    kinds = [t.trigger for t in of(events.TriggerFired, seen)]
    assert kinds == ["new_message", "pause", "pause"]  # then pauses stop until someone speaks


async def test_simulation_stops_after_repeated_silence(embedder):
    settings = offline_settings(max_silent_steps=3, max_turns=15)
    room, _, seen = await build(settings, embedder, library(3))
    for a in room.agents:
        a.proactivity = QUIET
    status = await loops.run_simulation(room, icebreaker="Hey!")
    assert status == "finished"
    assert len(room.messages) == 1
    finished = of(events.SessionFinished, seen)[0]
    assert "3 silent steps" in finished.reason
    assert [t.trigger for t in of(events.TriggerFired, seen)] == ["new_message", "pause", "pause"]


async def test_a_silent_end_names_the_best_score_against_the_threshold_and_what_to_change(
    embedder,
):
    settings = offline_settings(max_silent_steps=3, max_turns=15)
    room, _, seen = await build(settings, embedder, library(3))
    for a in room.agents:
        a.proactivity = QUIET  # imThreshold 5: no thought gets there
    await loops.run_simulation(room, icebreaker="Hey!")
    assert len(room.messages) == 1
    scores = [e.decision.score for e in of(events.DecisionMade, seen)]
    assert scores
    assert None not in scores
    reason = of(events.SessionFinished, seen)[0].reason
    assert reason == (
        "3 silent steps in a row: no thought's motivation reached the threshold"
        f" (best {max(scores):.2f} against 5.00); try a more talkative preset"
        " (active-contributor), lower the thresholds, or a stronger model"
    )
    # The record keeps it, as the window shows it.
    assert room.silence.best is not None
    assert room.silence.best.score == max(scores)


async def test_the_silent_run_starts_afresh_when_someone_speaks(embedder):
    room, _, _seen = await build(offline_settings(), embedder, library(2))
    for a in room.agents:
        a.proactivity = QUIET
    room.add_human("Zoe")
    await room.post_human_message("Zoe", "What did you do last weekend?")
    await room.step_once()
    assert room.silence.best is not None
    await room.post_human_message("Zoe", "Anyone?")
    assert room.silence.best is None
    assert room.silence.explain(1) == "1 silent steps in a row"


async def test_simulation_stops_at_max_turns(embedder):
    room, _, _ = await build(offline_settings(max_turns=5, seed=4), embedder, library(4))
    await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    assert len(room.messages) == 5
    assert room.status == "finished"


async def test_run_control_pause_step_and_stop(embedder):
    room, _, seen = await build(offline_settings(max_turns=50), embedder, library(3))
    control = RunControl()
    control.pause()
    task = asyncio.create_task(
        loops.run_simulation(room, icebreaker="What did you do last weekend?", control=control)
    )
    await asyncio.sleep(0.3)
    assert of(events.TriggerFired, seen) == []
    control.step()
    for _ in range(100):
        if of(events.TriggerFired, seen) and control.paused:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)
    assert len(of(events.TriggerFired, seen)) == 1
    control.stop()
    assert await asyncio.wait_for(task, 5) == "interrupted"


async def test_force_express_posts_the_thought_and_links_it(embedder):
    room, _, seen = await build(offline_settings(), embedder, library(2))
    ana = room.agents[0]
    ana.proactivity = QUIET
    room.agents[1].proactivity = QUIET
    room.add_human("Zoe")
    await room.post_human_message("Zoe", "Anyone been to the sea lately?")
    await room.step_once()
    thought = next(iter(ana.reservoir.thoughts.values()))
    msg = await room.force_express(ana.name, thought.id)
    assert msg.speaker == ana.name
    assert msg.thought_id == thought.id
    assert ana.reservoir.get(thought.id).expressed_in == msg.id
    expressed = of(events.ThoughtExpressed, seen)[-1]
    assert (expressed.thought_id, expressed.message_id, expressed.forced) == (
        thought.id,
        msg.id,
        True,
    )


async def test_an_added_memory_becomes_a_stimulus(embedder):
    room, _, seen = await build(offline_settings(creativity_prob=0.0), embedder, library(2))
    ana = room.agents[0]
    item = await ana.memory.add(
        "interest", "I build wooden sailing boats by hand.", weight=1.0, step=room.step
    )
    room.add_human("Zoe")
    await room.post_human_message("Zoe", "Has anyone ever built a wooden boat?")
    await room.step_once()
    retrieved = [e for e in of(events.MemoriesRetrieved, seen) if e.agent == ana.name][-1]
    assert item.ref in [s.ref for s in retrieved.stimuli]
    assert any(
        item.ref in e.thought.stimuli
        for e in of(events.ThoughtFormed, seen)
        if e.thought.agent == ana.name
    )


async def test_in_real_time_agents_wait_for_a_human_after_a_streak(embedder):
    settings = offline_settings(pause_seconds=0.2, max_agent_streak=3, seed=2)
    room, _, _seen = await build(settings, embedder, library(3))
    chatty = PRESETS["non-stop-chatter"].model_copy(update={"im_threshold": 1.0})
    for a in room.agents:
        a.proactivity = chatty  # every trigger makes someone speak
    room.add_human("Zoe")
    runner = asyncio.create_task(loops.run_realtime(room))
    await room.post_human_message("Zoe", "What did you all do last weekend?")
    for _ in range(500):
        if len(room.messages) >= 4:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(1.0)  # several pause periods: still nobody speaks
    assert not runner.done(), runner.exception()
    assert [m.kind for m in room.messages] == ["human", "ai", "ai", "ai"]
    await room.post_human_message("Zoe", "Nice. Anything else?")
    for _ in range(500):
        if len(room.messages) >= 6:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.5)
    room.stop()
    await asyncio.wait_for(runner, 5)
    kinds = [m.kind for m in room.messages]
    assert kinds[4:6] == ["human", "ai"]  # a person speaking re-engages the agents
    assert "ai,ai,ai,ai" not in ",".join(kinds)  # never more than the streak
