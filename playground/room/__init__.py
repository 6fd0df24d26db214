"""The shared room: who is seated, what triggers a step, who takes the floor, and the loops that drive it."""
