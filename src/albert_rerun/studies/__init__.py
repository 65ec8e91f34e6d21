"""What to train and how to judge it: ``conditions`` (every claim's runs at a profile),
``training`` (the jobs and stage runners every study shares), ``driver`` (``python -m
albert_rerun.studies``: every run a profile's chapters need), ``confirm`` (the
confirmatory registration), ``long_pilot``, ``recipe``, ``gpu_search``, ``baselines``
(controls without a neural network).
"""
