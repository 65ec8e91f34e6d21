"""The claims: conditions, the driver that trains and evaluates them, and each claim's
tables, decisions and verdicts.

``conditions`` (what each claim trains), ``driver`` (``python -m albert_rerun.claims``),
``setup`` (a notebook's parameters), ``measurements`` (throughput of the Table 1
models), ``stats`` and ``power`` (intervals, tests, Holm, seeds), ``decisions`` (stored
runs in, decisions out: the machinery every chapter shares), one module per chapter
(``asymmetry``, ``sop_nsp``, ``dropout``, ``wall_clock``, ``transitions``,
``embedding_size``), ``downstream`` (the downstream table and its controls), ``ledger``
(every decision as one Holm-adjusted family), ``text`` (the sentences and tables the
pages share), ``baselines`` (count-based and bag-of-words references), ``paper`` (the
paper's figures).
"""
