"""Talking to OpenAI-compatible servers: :mod:`~playground.llm.client` (the calls the app makes)
over :mod:`~playground.llm.transport` (retries, limits, usage in :mod:`~playground.llm.usage`),
structured answers in :mod:`~playground.llm.schemas`, what a server accepts in
:mod:`~playground.llm.capabilities`, and rating distributions in :mod:`~playground.llm.rating`."""
