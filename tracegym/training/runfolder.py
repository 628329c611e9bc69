"""The names of a run folder's files (laid out in tracegym/training/checkpoint.py), apart from the code that
writes them: commands that only point at them stay free of torch."""

CHECKPOINTS = "checkpoints"
LATEST = "latest"
STATE_FILE = "trainer_state.pt"
RUN_FILE = "run.json"
CONFIG_FILE = "train_config.json"  # not config.json: that name marks a model folder
DIFFICULTY_FILE = "difficulty.json"  # the difficulty filter's measurements (tracegym/training/difficulty.py)
