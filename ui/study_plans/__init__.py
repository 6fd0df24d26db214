"""The Study plans window: create, run, follow, stop and resume a user study of three
conversations for one group of people, from the window (importing this package loads no Qt)."""
