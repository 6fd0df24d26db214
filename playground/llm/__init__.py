"""Transport to OpenAI-compatible servers."""
