"""The paper's comparison: experiment protocols and their runner, reading results back, and the next-speaker evaluation."""
