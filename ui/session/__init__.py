"""The window's session: :class:`ui.session.controller.SessionController` and the parts it holds
(the embedding model, the room's commands, STORM simulated users, the study server, the run
state)."""
