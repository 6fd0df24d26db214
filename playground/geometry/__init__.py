"""Conversational geometry (TRACE): features of a conversation's path through embedding space.

:mod:`playground.geometry.features` computes them from vectors (pure numpy);
:mod:`playground.geometry.vectors` embeds a session's messages (cached per embedding model);
:mod:`playground.geometry.store` stores the features in ``session_features``; :mod:`playground.cli.features` is
``playground features``. Definitions: docs/geometry.md.
"""
