"""The dialogs the main window's toolbar and Participants menu open, and what their OK does.

New session… (with its persona editor and the STORM simulated users), Engine…, the selected
participant's settings, Join as human…, and the Participants ▸ Add participant submenu. Each
dialog's OK becomes a controller command run on the loop (:meth:`WindowHost.spawn`); the
controller turns failures into messages.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMenu

from playground import domain, errors
from ui.dialogs.engine_settings import EngineSettingsDialog
from ui.dialogs.invite import InviteDialog
from ui.dialogs.join import JoinDialog
from ui.dialogs.new_session import NewSessionDialog
from ui.dialogs.participant_settings import ParticipantSettingsDialog
from ui.dialogs.persona_editor import PersonaEditorDialog
from ui.policies import POLICY_HELP
from ui.storm.seating import attach_to_new_session
from ui.window.host import WindowHost


class SessionDialogs(QObject):
    """Opens the session's dialogs over ``window``.

    Args:
        window: the main window (its controller, selection, messages and ``spawn``).
        add_menu: Participants ▸ Add participant, filled from the persona library each time the
            Participants menu opens (:meth:`fill_add_menu`).
    """

    def __init__(self, window: WindowHost, add_menu: QMenu) -> None:
        super().__init__(window.window())
        self.window = window
        self.add_menu = add_menu
        self.invite: InviteDialog | None = None

    # -- a new session -----------------------------------------------------------------------------

    def open_new_session(self) -> NewSessionDialog | None:
        w = self.window
        try:
            dlg = NewSessionDialog(
                w.controller.library(),
                w.controller.icebreakers(),
                w.controller.settings,
                w.window(),
            )
        except errors.PlaygroundError as exc:
            w.show_error(f"Persona library: {exc}")
            return None
        dlg.simulated = attach_to_new_session(dlg, w.controller)  # type: ignore[attr-defined]
        dlg.accepted.connect(lambda: self.start_session(dlg))
        dlg.edit_button.clicked.connect(lambda: self.open_persona_editor(dlg))
        dlg.open()
        return dlg

    def open_persona_editor(self, session_dialog: NewSessionDialog) -> PersonaEditorDialog | None:
        persona = session_dialog.current_persona()
        if persona is None:
            return None
        w = self.window
        editor = PersonaEditorDialog(persona, w.controller.save_persona, session_dialog)
        editor.saved.connect(session_dialog.replace_persona)
        editor.saved.connect(
            lambda p: w.hint(f"Saved persona {p.name}; it applies to new sessions.")
        )
        editor.open()
        return editor

    def start_session(self, dlg: NewSessionDialog) -> asyncio.Future[object]:
        w = self.window
        w.controller.settings.engine.seed = dlg.seed.value()
        chosen, icebreaker = dlg.chosen(), dlg.icebreaker_text()
        preset, policies = dlg.preset.currentData(), dlg.policies()
        simulated = dlg.simulated.seats() if hasattr(dlg, "simulated") else ()

        async def start() -> None:
            # A session still live ends only when the user says so (as when opening a replay).
            if not await w.confirm_leaving_live("starting a new session"):
                return
            await w.controller.new_session(
                chosen, icebreaker=icebreaker, preset=preset, policies=policies, simulated=simulated
            )

        return w.spawn(start())

    # -- participants ------------------------------------------------------------------------------

    def fill_add_menu(self) -> None:
        w = self.window
        self.add_menu.clear()
        room = w.controller.room
        try:
            library = w.controller.library()
        except errors.PlaygroundError as exc:
            w.show_error(str(exc))
            return
        present = set(room.participants) if room else set()
        for p in library:
            # One submenu per persona: which turn-taking policy the new participant follows.
            sub = self.add_menu.addMenu(p.name)
            sub.setEnabled(room is not None and p.name not in present)
            for policy in domain.POLICIES:
                act = sub.addAction(f"as {domain.POLICY_LABELS[policy]}")
                act.setToolTip(POLICY_HELP[policy])
                act.triggered.connect(
                    lambda _=False, persona=p, pol=policy: w.spawn(
                        w.controller.room_commands.add_participant(persona, policy=pol)
                    )
                )

    def open_participant_settings(self) -> ParticipantSettingsDialog | None:
        w = self.window
        room = w.controller.room
        name = w.selection.name
        if room is None or name not in {a.name for a in room.agents}:
            w.show_error("Select an AI participant first.")
            return None
        agent = room.agent(name)
        dlg = ParticipantSettingsDialog(name, agent.proactivity, w.window(), policy=agent.policy)

        def apply() -> None:
            w.spawn(w.controller.room_commands.set_proactivity(name, dlg.value()))
            if dlg.policy_value() != agent.policy:
                w.spawn(w.controller.room_commands.set_policy(name, dlg.policy_value()))

        dlg.accepted.connect(apply)
        dlg.open()
        return dlg

    def open_join(self) -> JoinDialog:
        w = self.window
        dlg = JoinDialog(w.window())
        dlg.accepted.connect(lambda: w.spawn(w.controller.join_as_human(dlg.name.text())))
        dlg.open()
        return dlg

    def open_invite(self) -> InviteDialog:
        """Invite people… (non-modal, one per window): the live session's seats and links."""
        w = self.window
        c = w.controller
        if self.invite is None:

            def invite(n: int, host: str) -> None:
                w.spawn(c.guarded("Invite people", lambda: c.study.invite(n, host=host)))

            self.invite = InviteDialog(c.study, invite, w.window())
        self.invite.show()
        self.invite.raise_()
        self.invite.activateWindow()
        return self.invite

    # -- the engine --------------------------------------------------------------------------------

    def open_engine_settings(self) -> EngineSettingsDialog:
        w = self.window
        c = w.controller
        dlg = EngineSettingsDialog(
            c.settings, key_from_env=bool(c.environ.get("OPENAI_API_KEY")), parent=w.window()
        )

        async def test(overrides: dict[str, Any]) -> None:
            dlg.show_result("Testing…", True)
            try:
                dlg.show_result(await c.test_connection(overrides), True)
            except errors.PlaygroundError as exc:
                dlg.show_result(str(exc), False)

        def apply() -> None:
            try:
                c.configure(dlg.overrides())
                w.hint(f"Engine: {c.engine_label()} (applies to the next new session)")
            except errors.PlaygroundError as exc:
                w.show_error(f"Engine settings: {exc}")

        dlg.test_requested.connect(lambda o: w.spawn(test(o)))
        dlg.accepted.connect(apply)
        dlg.open()
        return dlg
