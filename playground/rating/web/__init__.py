"""Blind rating from the raters' own browsers: the protocol, the session logic and the server."""
