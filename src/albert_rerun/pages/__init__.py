"""What a reader sees: the results turned into words, tables and figures. ``reader``
(headlines, boxes, the results table, the first screen), ``ledger`` (every decision as
one Holm-adjusted family), ``figures`` and ``plots``, ``figure_text`` (figure sizes and
text), ``setup`` (a notebook's parameters)."""
