"""Statistics, with no knowledge of runs or claims: ``inference`` (intervals, paired
tests, bootstrap, Holm, verdicts), ``power`` (seeds and power), ``trend`` (slopes over
compute), ``curves`` (how much a layer-to-layer curve oscillates)."""
