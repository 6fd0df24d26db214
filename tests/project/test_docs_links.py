"""The README routes to the docs pages: every relative link in README.md, CHANGELOG.md and
docs/*.md points at a file that exists (and at a heading that exists, when it names one), the
README stays short, and every docs page can be reached from it."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_MAX_LINES = 220

#: [text](target) and ![alt](target); the target ends at a space (a title) or the bracket.
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:...


def pages() -> list[Path]:
    return [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


def _prose(text: str, spans: bool = True) -> str:
    """The text outside fenced code blocks (and, with ``spans``, inline code spans), line for
    line."""
    lines, fence = [], None
    for line in text.splitlines():
        marker = re.match(r"^\s*(```+|~~~+)", line)
        if marker and (fence is None or marker.group(1)[0] == fence[0]):
            fence = None if fence else marker.group(1)
            lines.append("")
            continue
        lines.append("" if fence else re.sub(r"`+[^`]*`+", "", line) if spans else line)
    return "\n".join(lines)


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every link in ``path``'s prose."""
    found = []
    for number, line in enumerate(_prose(path.read_text(encoding="utf-8")).splitlines(), 1):
        found += [(number, m.group(1)) for m in LINK.finditer(line)]
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to -."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[`*~]|<[^>]+>", "", text)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _prose(path.read_text(encoding="utf-8"), spans=False).splitlines():
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def problems(path: Path) -> list[str]:
    found = []
    for number, target in links(path):
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        where = f"{path.relative_to(ROOT)}:{number}: {target}"
        dest = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not dest.exists():
            found.append(f"{where}: no such file")
        elif file_part.startswith("/") or ROOT not in (dest, *dest.parents):
            found.append(f"{where}: points outside the repository")
        elif anchor and dest.suffix == ".md" and unquote(anchor) not in anchors(dest):
            found.append(f"{where}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    return found


@pytest.mark.parametrize("path", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path: Path) -> None:
    assert problems(path) == []


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES})"


def _linked_pages(path: Path) -> set[Path]:
    out = set()
    for _, target in links(path):
        file_part = target.partition("#")[0]
        if file_part and not EXTERNAL.match(target):
            dest = (path.parent / unquote(file_part)).resolve()
            if dest.suffix == ".md" and dest.exists():
                out.add(dest)
    return out


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    """Linked from the README, or from a page the README links."""
    first = _linked_pages(README)
    reachable = first | {page for linked in first for page in _linked_pages(linked)}
    missing = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "docs").glob("*.md"))
        if p.resolve() not in reachable
    ]
    assert missing == []


def test_the_checker_sees_broken_links(tmp_path: Path) -> None:
    """The checks themselves: a missing file, a missing heading, links in code are not links."""
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# There\n\n## A heading: with `code`\n", encoding="utf-8")
    page.write_text(
        "[ok](there.md#a-heading-with-code) [gone](gone.md) [bad](there.md#nowhere)\n"
        "`[not a link](nowhere.md)`\n\n```\n[nor this](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    assert [t for _, t in links(page)] == [
        "there.md#a-heading-with-code",
        "gone.md",
        "there.md#nowhere",
    ]
    assert anchors(tmp_path / "there.md") == {"there", "a-heading-with-code"}
