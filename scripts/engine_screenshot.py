"""The Engine dialog after Test connection against a server that refuses json_schema (the
loopback stand-in replaying llama-cpp-python's refusal), as docs/engine-dialog.png.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/engine_screenshot.py
"""

import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import qasync
from PySide6.QtWidgets import QApplication

from testbed.llm_server import FakeLLMServer
from ui.app import build
from ui.dialogs.engine_settings import EngineSettingsDialog

OUT = Path(__file__).resolve().parent.parent / "docs" / "engine-dialog.png"


async def main() -> None:
    with FakeLLMServer(profile="llama-cpp-python") as srv:
        env = {"OPENAI_BASE_URL": srv.base_url}
        window, controller = build(db_path="/tmp/engine-shot.db", environ=env)
        controller.configure({"model": "smollm2-135m"})
        dialog = EngineSettingsDialog(controller.settings, key_from_env=False)
        dialog.show()
        verdict = await controller.test_connection(dialog.overrides())
        dialog.show_result(verdict, True)
        dialog.adjustSize()
        dialog.resize(max(dialog.width(), 600), dialog.height())
        await asyncio.sleep(0.2)
        dialog.grab().save(str(OUT))
        print(OUT, dialog.size().width(), dialog.size().height())
        dialog.close()
        window.close()


app = QApplication([])
qasync.run(main())
