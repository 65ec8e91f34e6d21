"""Statistics, with no knowledge of runs or claims: ``inference`` (intervals, paired
tests, bootstrap, Holm, the verdict states), ``power`` (seeds and power), ``curves``
(how much a layer-to-layer curve oscillates)."""
