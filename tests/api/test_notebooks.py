"""The notebooks of docs/notebooks: the quickstart runs on the offline engine in a real kernel and
its outputs say what the database holds; the model-server notebook (it needs a server, so it is
not run) is a valid notebook whose code compiles. Both are committed with their outputs cleared."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager
from nbclient import NotebookClient

import playground as pg

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "docs" / "notebooks"
ALL = ("quickstart.ipynb", "model-server.ipynb")


def _text(cell: Any) -> str:
    """What a code cell printed and displayed as text."""
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif out["output_type"] in ("execute_result", "display_data"):
            parts.append(out["data"].get("text/plain", ""))
    return "".join(parts)


def _cell(nb: Any, starts: str) -> Any:
    """The code cell whose source starts with ``starts`` (after its comments)."""
    for cell in nb.cells:
        if cell.cell_type == "code" and starts in cell.source:
            return cell
    raise AssertionError(f"no cell with {starts!r}")


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """The quickstart executed in a real kernel, on a temporary database."""
    db = tmp_path_factory.mktemp("notebook") / "quickstart.db"
    nb = nbformat.read(NOTEBOOKS / "quickstart.ipynb", as_version=4)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["PLAYGROUND_NOTEBOOK_DB"] = str(db)
    env["HF_HUB_OFFLINE"] = "1"
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}
    )
    client.execute(env=env)  # a cell that raises fails here, naming the cell
    return nb, db


def test_quickstart_seats_four_default_personas_and_runs_ten_turns(quickstart: Any) -> None:
    nb, db = quickstart
    seated = [p.name for p in pg.default_personas()[:4]]
    assert _text(_cell(nb, "library = pg.default_personas()")) == f"seated: {', '.join(seated)}\n"
    said = _text(_cell(nb, "session = await pg.simulate("))
    found = re.search(r"session (\S+): (\w+), (\d+) messages", said)
    assert found, said
    with pg.open(db) as saved:
        session = saved.session(found[1])
        shown = session.to_pandas()
    assert found[2] == session.status == "finished"
    assert int(found[3]) == len(shown.messages) == 10
    assert sorted(shown.participants["name"]) == sorted(seated)


def test_quickstart_plots_motivation_by_agent_as_an_inline_png(quickstart: Any) -> None:
    nb, _ = quickstart
    cell = _cell(nb, "%matplotlib inline")
    pngs = [o for o in cell.outputs if "image/png" in o.get("data", {})]
    assert len(pngs) == 1
    assert len(pngs[0]["data"]["image/png"]) > 1000  # base64 of a real figure
    plotted = re.search(r"agents plotted: (.+)", _text(cell))
    assert plotted, _text(cell)
    seated = {p.name for p in pg.default_personas()[:4]}
    assert set(plotted[1].split(", ")) <= seated


def test_quickstart_compares_turns_by_condition_over_three_plus_three(quickstart: Any) -> None:
    nb, db = quickstart
    said = _text(_cell(nb, "experiment = await pg.experiment("))
    found = re.search(r"experiment (x\w+): 6 conversations, 0 failed", said)
    assert found, said
    table = _text(_cell(nb, "per_conversation = messages.groupby"))
    with pg.open(db) as saved:
        frames = saved.experiment(found[1]).to_pandas()
    per = frames.messages.groupby(["condition", "session_id"]).size().groupby("condition")
    for condition in ("inner-thoughts", "next-speaker"):
        row = next(line for line in table.splitlines() if line.startswith(condition))
        assert row.split()[1:3] == [str(per.size()[condition]), f"{per.mean()[condition]:.1f}"]
        assert per.size()[condition] == 3


def test_quickstart_shows_a_saved_session_s_thoughts_as_a_table(quickstart: Any) -> None:
    nb, db = quickstart
    cell = _cell(nb, "saved = pg.open(DB)")
    found = re.search(r"(\S+): (\d+) thoughts", _text(cell))
    assert found, _text(cell)
    with pg.open(db) as saved:
        thoughts = saved.session(found[1]).to_pandas().thoughts
    assert int(found[2]) == len(thoughts) > 0
    html = next(o["data"]["text/html"] for o in cell.outputs if "text/html" in o.get("data", {}))
    for column in ("agent", "created_step", "system", "saliency", "score", "method", "text"):
        assert f"<th>{column}</th>" in html
    assert str(thoughts["text"].iloc[0])[:30] in html


@pytest.mark.parametrize("name", ALL)
def test_notebook_is_valid_and_its_code_compiles(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    python = TransformerManager()
    for cell in nb.cells:
        if cell.cell_type == "code":
            source = python.transform_cell(cell.source)  # %magics into Python
            compile(source, f"{name} cell", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.parametrize("name", ALL)
def test_notebook_is_committed_with_its_outputs_cleared(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    assert all(c.outputs == [] and c.execution_count is None for c in code)
