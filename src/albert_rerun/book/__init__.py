"""The book: everything that turns stored results into what a reader sees.

``build`` executes the chapters with papermill and renders them with Jupyter Book;
``values`` feeds the pages' MyST substitutions. One module per claim reads stored runs
through ``stats`` and ``studies.decisions`` into decisions (``exact``, ``asymmetry``, ``sop_nsp``,
``dropout``, ``wall_clock``, ``transitions``, ``embedding_size``, ``downstream``,
``measurements``); ``headlines``, ``chapter_box``, ``confirmatory``, ``first_screen``,
``ledger`` and ``scale`` give the values a page glues; ``figures`` and ``plots`` draw.
"""
