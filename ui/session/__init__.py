"""The window's session: the state the session controller owns (:mod:`ui.session.core`), the base
of :class:`ui.session.controller.SessionController` and of its command groups."""
