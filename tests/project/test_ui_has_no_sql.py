"""The UI asks the engine for what it shows: no SQL text and no ``.execute(`` call in ui/.

Every query lives in a named engine function (``playground.storage.library``,
``playground.experiments.results``, ``playground.rating``) that the UI calls.
"""

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: SQL keywords as queries spell them (upper case, so that a label like "Select all" is not one).
SQL = re.compile(
    r"\b(SELECT|INSERT|UPDATE|DELETE|REPLACE\s+INTO|UPSERT|CREATE\s+(TABLE|INDEX|VIEW)"
    r"|DROP|ALTER\s+TABLE|PRAGMA|FROM|WHERE|JOIN|VALUES|GROUP\s+BY|ORDER\s+BY)\b"
)
EXECUTE = {"execute", "executemany", "executescript"}


def sql_in(path: Path, root: Path = REPO) -> list[str]:
    """``file:line: what`` for each SQL keyword in a string and each ``.execute(`` call."""
    where = path.relative_to(root).as_posix()
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = SQL.search(node.value)
            if match:
                found.append(f"{where}:{node.lineno}: SQL keyword {match.group(0)!r} in a string")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in EXECUTE
        ):
            found.append(f"{where}:{node.lineno}: .{node.func.attr}( call")
    return found


def test_ui_has_no_sql():
    offenders = [hit for path in sorted((REPO / "ui").rglob("*.py")) for hit in sql_in(path)]
    assert offenders == [], "\n".join(offenders)


def test_the_check_names_file_and_line(tmp_path):
    bad = tmp_path / "ui" / "bad.py"
    bad.parent.mkdir()
    bad.write_text(
        'LABEL = "Select all"\n'
        "def f(db):\n"
        '    return db.execute(f"SELECT id FROM {TABLE}").fetchall()\n'
    )
    assert sql_in(bad, tmp_path) == [
        "ui/bad.py:3: .execute( call",
        "ui/bad.py:3: SQL keyword 'SELECT' in a string",
    ]
