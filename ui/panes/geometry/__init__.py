"""The geometry view's plots: series and trajectories."""
