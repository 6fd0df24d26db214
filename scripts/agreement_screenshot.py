"""Screenshot of the report view's Agreement tables: ``docs/agreement.png``.

Builds a synthetic database (seeded; not a measured result): 40 sessions with geometry features,
two human raters and a judge that each see a hidden quality through noise, 60 rated pairs. Then
opens the ratings report on it and grabs the window.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/agreement_screenshot.py [WIDTHxHEIGHT] [OUT]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.rating.store import CONVERSATION_METRICS
from playground.storage import open_database
from testbed import agreement_data as data
from ui.rating.report_view import ReportView

JUDGE = "judge:gpt-4o-mini"


def build(path: Path, seed: int = 12) -> None:
    rng = np.random.default_rng(seed)
    db = open_database(path)
    n = 40
    quality = rng.normal(size=n)
    ids = [f"s{i:02d}" for i in range(n)]
    for i, sid in enumerate(ids):
        data.session(db, sid, "inner-thoughts" if i % 2 else "baseline")
        q = quality[i]
        data.features(
            db,
            sid,
            {
                "cohesion": 0.5 + 0.1 * q + rng.normal(0, 0.1),
                "volatility": 0.4 - 0.08 * q + rng.normal(0, 0.1),
                "self_similarity_mean": 0.3 + rng.normal(0, 0.05),
                "turns": float(rng.integers(8, 20)),
            },
        )
        for m in CONVERSATION_METRICS:
            score = float(np.clip(4 + q + rng.normal(0, 1.0), 1, 7))
            data.judge_score(db, sid, JUDGE, m.key, round(score, 2), round(score))
            for rater in ("ana", "ben"):
                value = int(np.clip(round(4 + q + rng.normal(0, 0.9)), 1, 7))
                data.rate(db, sid, rater, m.key, value)
    for _ in range(60):
        a, b = rng.choice(n, 2, replace=False)
        for rater in ("ana", "ben", "chloe"):
            noisy = quality[b] - quality[a] + rng.normal(0, 0.8)
            data.prefer(db, rater, ids[a], ids[b], ids[b] if noisy > 0 else ids[a])
    db.close()


def main() -> None:
    size = sys.argv[1] if len(sys.argv) > 1 else "1440x900"
    out = Path(sys.argv[2] if len(sys.argv) > 2 else "docs/agreement.png")
    width, height = (int(x) for x in size.split("x"))
    app = QApplication.instance() or QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "agreement.db"
        build(path)
        db = open_database(path)
        view = ReportView(db)
        view.resize(width, height)
        view.show()
        for _ in range(20):
            app.processEvents()
        view.refresh()
        app.processEvents()
        frame = view.agreement.parentWidget()
        assert frame is not None
        frame.adjustSize()
        app.processEvents()
        out.parent.mkdir(parents=True, exist_ok=True)
        view.grab().save(str(out))
        print(f"wrote {out} ({width}x{height})")
        view.close()
        db.close()


if __name__ == "__main__":
    main()
