"""The book: everything that turns stored results into what a reader sees (``build``
executes and renders; ``values`` feeds the pages' substitutions)."""

