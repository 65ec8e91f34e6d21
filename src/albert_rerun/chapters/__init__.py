"""One module per claim, reading stored runs through ``stats`` into decisions:
``decisions`` (the machinery every chapter shares), ``exact``, ``asymmetry``, ``sop_nsp``,
``dropout``, ``wall_clock``, ``transitions``, ``embedding_size``, ``downstream``,
``measurements`` (throughput of the Table 1 models), ``text`` (the sentences and tables
the chapters share)."""
