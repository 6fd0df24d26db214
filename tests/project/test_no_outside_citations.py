"""The repository cites nothing outside itself, and every ``docs/spec.md §N.M`` it cites exists.

The papers are cited by title, section and equation, table or appendix number, or through
docs/spec.md; a path to a file that is not in the repository (a private specification, a folder
of paper texts next to the checkout) would leave a reader with nothing to open.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "docs" / "spec.md"
SUFFIXES = {".py", ".md", ".toml", ".txt", ".sh", ".json"}
#: Names of the paper texts that live outside the repository.
PAPER_FILES = ("inner-thoughts", "storm", "thoughttrace", "author-labeling", "trace")

# Built from pieces so that this file does not cite what it forbids.
_SPEC_FILE = "SPEC" + r"\.md"
OUTSIDE = re.compile(
    "|".join(
        [
            _SPEC_FILE,  # the private specification (docs/spec.md is lower case)
            r"\.\./" + "shared",  # the folder next to the checkout
            "papers" + r"/[\w.-]*\.txt",  # a paper text by path
            r"\b(?:" + "|".join(PAPER_FILES) + r")\.txt\b",  # a paper text by name
            r"\b[\w-]+\.txt\s*§",  # any other "<name>.txt §" citation
        ]
    )
)
#: ``docs/spec.md §1.5``, ``docs/spec.md §1.2, §1.4``, ``docs/spec.md §2.7–§2.9``.
SPEC_REF = re.compile(r"docs/spec\.md\s+(§\d+(?:\.\d+)*(?:\s*(?:,|and|or|–|-)\s*§\d+(?:\.\d+)*)*)")
SECTION = re.compile(r"^#{2,6}\s+(\d+(?:\.\d+)*)\.?\s", re.MULTILINE)


def tracked_text_files() -> list[Path]:
    """Tracked files, and new ones not ignored, with a text suffix (this file excluded)."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    here = Path(__file__).resolve()
    files = {REPO / name for name in out.split("\0") if name}
    return sorted(p for p in files if p.suffix in SUFFIXES and p.is_file() and p.resolve() != here)


def offending_lines(path: Path) -> list[str]:
    """``file:line: text`` for each line of ``path`` that cites a file outside the repository."""
    text = path.read_text(encoding="utf-8", errors="replace")
    rel = path.relative_to(REPO)
    return [
        f"{rel}:{n}: {line.strip()}"
        for n, line in enumerate(text.splitlines(), 1)
        if OUTSIDE.search(line)
    ]


def spec_sections() -> set[str]:
    """Section numbers of docs/spec.md's headings: ``1``, ``1.5``, ``1.9.1``…"""
    return set(SECTION.findall(SPEC.read_text(encoding="utf-8")))


def test_the_pattern_catches_what_it_should():
    bad = [
        "see " + "SPEC" + ".md §1, Participation",
        "the papers in .." + "/shared/papers",
        "(" + "papers/" + "inner-thoughts" + ".txt §3.2)",
        "storm" + ".txt §2.2",
        "as in " + "thoughttrace" + ".txt",
        "notes" + ".txt § 4",
    ]
    good = [
        "docs/spec.md §1.5 Participation",
        "Inner Thoughts paper, §5.2",
        "STORM paper §2.2 and appendix M",
        '(tmp / "err' + '.txt")',
        "requirements" + ".txt",
    ]
    assert [s for s in bad if not OUTSIDE.search(s)] == []
    assert [s for s in good if OUTSIDE.search(s)] == []


def test_the_spec_exists_with_the_top_level_sections():
    assert {"1", "2", "3", "4", "1.1", "1.2", "1.3", "1.4", "1.5"} <= spec_sections()


def test_no_file_cites_anything_outside_the_repository():
    found = [
        hit for p in tracked_text_files() if p.name != "README.md" for hit in offending_lines(p)
    ]
    assert found == [], "citations of files outside the repository:\n" + "\n".join(found)


def test_readme_cites_nothing_outside_the_repository():
    found = [
        hit for p in tracked_text_files() if p.name == "README.md" for hit in offending_lines(p)
    ]
    assert found == [], "citations of files outside the repository:\n" + "\n".join(found)


def test_every_cited_spec_section_exists():
    sections = spec_sections()
    missing = []
    for path in tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            for refs in SPEC_REF.findall(line):
                missing += [
                    f"{path.relative_to(REPO)}:{n}: §{number}"
                    for number in re.findall(r"§(\d+(?:\.\d+)*)", refs)
                    if number not in sections
                ]
    assert missing == [], "docs/spec.md has no such section:\n" + "\n".join(missing)
