"""What the job windows (Experiments, Study plans) share: the window and its loop job."""
