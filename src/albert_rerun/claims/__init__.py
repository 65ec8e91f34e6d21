"""The claims: conditions, the driver that trains and evaluates them, and the analysis.

``conditions`` (what each claim trains), ``driver`` (``python -m albert_rerun.claims``),
``measurements`` (throughput of the Table 1 models), ``stats`` and ``power`` (intervals,
tests, Holm, seeds), ``analysis`` (each claim's tables, decisions and verdicts),
``baselines`` (count-based and bag-of-words references), ``paper`` (the paper's figures).
"""
