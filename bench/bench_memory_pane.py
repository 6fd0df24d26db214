"""Benchmark: the memory pane with a thousand memories — selecting the agent, then two retrievals
re-sorting it by saliency, as the window does during a run.

Target: under 3 s for the whole sequence (a long-running agent's memory must not freeze the
window). Run headless:  QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_memory_pane.py
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from _common import REPO  # noqa: F401

from PySide6.QtWidgets import QApplication

from playground import domain, events
from ui.bridge import EngineBridge
from ui.selection import SelectedParticipant
from ui.panes.memory.memory_pane import MemoryPane

TARGET_S = 3.0
MEMORIES = 1000
RUNS = 5


def add(bridge: EngineBridge, mid: int) -> None:
    text = f"Memory {mid}: a sentence long enough to wrap in a narrow pane."
    memory = domain.MemoryItem(id=mid, kind="fact", text=text, weight=1.0)
    bridge.dispatch(events.MemoryChanged(agent="Ana", change="added", memory=memory))


def retrieve(bridge: EngineBridge, memories: tuple[int, ...]) -> None:
    stimuli = [
        domain.Stimulus(ref=f"memory:{m}", text="…", saliency=m / MEMORIES, random=False)
        for m in memories
    ]
    bridge.dispatch(events.MemoriesRetrieved(agent="Ana", stimuli=stimuli, step=2))


def one_run(app: QApplication) -> float:
    bridge, selection = EngineBridge(), SelectedParticipant()
    pane = MemoryPane(bridge, selection)
    pane.resize(360, 700)
    pane.show()
    for mid in range(1, MEMORIES + 1):
        add(bridge, mid)
    app.processEvents()
    start = time.perf_counter()
    selection.select("Ana")
    app.processEvents()
    add(bridge, MEMORIES + 1)
    retrieve(bridge, (10, 500, 990))
    retrieve(bridge, (20, 600))
    app.processEvents()
    took = time.perf_counter() - start
    assert pane.table.rowCount() == MEMORIES + 1
    pane.close()
    pane.deleteLater()
    app.processEvents()
    return took


def main() -> None:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)  # instance() is typed as the core application
    times = [one_run(app) for _ in range(RUNS)]
    median = statistics.median(times)
    print(
        f"memory pane, {MEMORIES} memories, select + 2 retrievals: median {median:.3f} s,"
        f" max {max(times):.3f} s over {RUNS} runs (target < {TARGET_S:.1f} s)"
        f" {'OK' if median < TARGET_S else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
