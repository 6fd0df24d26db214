"""Human studies from browsers: people join one live room from their own machines.

Each invited person has a *seat* with its own unguessable token (:mod:`playground.study.seats`).
The app serves a small page and a WebSocket on the room's own asyncio loop
(:mod:`playground.study.server`); the hub (:mod:`playground.study.hub`) turns the room's events
into what a participant may see (the conversation, who is typing and connected, and their own
private notes, nothing else) and a participant's actions into the room's calls, which record
them as the window's human's are recorded.
"""
