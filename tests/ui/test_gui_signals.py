"""Ctrl-C or SIGTERM to the window's process closes it as its close button does, quietly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_closes_the_window_quietly_with_128_plus_it(tmp_path, signum):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    # XDG_CONFIG_HOME: the window keeps its geometry (QSettings) here, not in the user's ~/.config
    env.update(QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO), XDG_CONFIG_HOME=str(tmp_path))
    err = tmp_path / "err.txt"
    with err.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "playground"],
            cwd=tmp_path,  # the window's database goes to ./sessions here
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            time.sleep(12)  # past imports, the first paint and the model load: the window idles
            assert proc.poll() is None, err.read_text()
            proc.send_signal(signum)
            code = proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()
    text = "\n".join(ln for ln in err.read_text().splitlines() if "propagateSizeHints" not in ln)
    assert code == 128 + signum, text
    assert "Traceback" not in text, text
    assert "Error" not in text, text
