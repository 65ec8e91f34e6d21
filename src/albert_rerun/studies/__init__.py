"""What to train and how to judge it: every claim's conditions, the shared training
stages, the driver (``python -m albert_rerun.studies``), the confirmatory replication,
the compute ladder, the asymmetry study, the pilots, the recipe search and the
baselines without a neural network."""
