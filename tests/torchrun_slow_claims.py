"""The claims driver with every training step slowed down (a test helper, run by
torchrun): it leaves the test time to kill a rank between two checkpoints. Sleeping
changes no result."""
import sys
import time

from albert_rerun.studies.driver import main
from albert_rerun.engine import pretrain

_step = pretrain.train_step


def slow_step(*args, **kwargs):
    time.sleep(0.25)
    return _step(*args, **kwargs)


pretrain.train_step = slow_step
sys.exit(main())
