"""The main job's trainer: a PyTorch MLP fed with the feature pipeline's table by one of three
hand-offs (``feeds``), timed per epoch, with a digest of what each epoch read (``digest``).

Run it as ``python -m sluice_trainer`` (``--help``); ``python -m sluice_trainer.summary`` prints
the demo's summary over the runs it left.
"""
