"""The book: papermill executes the chapters, Jupyter Book renders them (``build``)."""
