"""The long pilot's figure, now in ``book.scale``: the names the figure checks import,
until they import ``book.scale``."""
from types import SimpleNamespace

from . import scale


def gather(store=None) -> SimpleNamespace:
    runs = scale.pilot_runs(store)
    return SimpleNamespace(runs=runs, rungs=scale.pilot_rungs() if runs is not None else {})


def figure(facts):
    return scale.pilot_figure(scale.counted_curve(facts.runs), facts.rungs)
