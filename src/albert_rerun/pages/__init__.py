"""What a reader sees: the results turned into words, tables and figures. ``headlines``
(each chapter's headline decision and the words for its result), ``chapter_box`` (a
chapter's bottom-line box and its glue), ``confirmatory`` (the confirmatory verdicts as
a reader meets them), ``first_screen`` (the introduction's values),
``scale`` (the runs' scale against the paper's), ``headline_figures``, ``ledger_page``
(what the ledger's page glues), ``ledger`` (every decision as one Holm-adjusted family),
``figures`` and ``plots``, ``figure_text`` (figure sizes and text), ``setup`` (a
notebook's parameters)."""
