"""The window's session: the state the session controller owns (:mod:`ui.session.core`), the base
of :class:`ui.controller.SessionController` and of its command groups."""
