"""The scale page's parts, now in ``book.scale``: the names ``book.build`` and the figure
checks import, until they import ``book.scale``."""
from .scale import rung_levels, standing_figure, two_sided_sentence, write_scale_parts  # noqa: F401


def standing():
    """``scale.standing`` with the long pilot's runs."""
    from .scale import pilot_runs, standing as table
    return table(pilot=pilot_runs())
