"""One agent's Inner Thoughts stages, in the paper's order: scoring, retrieval and memory, the thought reservoir, participation (Algorithm 1), and the agent that runs them."""
