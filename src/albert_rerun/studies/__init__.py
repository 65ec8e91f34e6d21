"""What to train and how to judge it: ``conditions`` (every claim's runs at a profile),
``training`` (the jobs and stage runners every study shares), ``driver`` (``python -m
albert_rerun.studies``: every run a profile's chapters need), ``confirm`` (the
confirmatory replication: what sized it, its training, its report, its command line),
with ``confirm_analysis`` (its registered design and analysis), ``ladder`` (the compute
ladder), ``asymmetry`` (the asymmetry study, with its pilot ``asymmetry_pilot``),
``long_pilot``, ``recipe``, ``gpu_search``,
``baselines`` (controls without a neural network), ``pair_cues`` (what the sentence-pair
bag of words reads of the segment-cut cue, and the baselines on the pairs without it).
"""
