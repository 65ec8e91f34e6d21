"""A notebook's first call: its papermill parameters validated, and the gpu profile
stopped on a machine without a CUDA device (with its predicted time there).

The validation itself is configuration (``profiles.validate_parameters``); the
prediction reads the driver's plan and the stored throughput, which is why this check
lives here, above the profiles, rather than in them.
"""
from __future__ import annotations

from ..profiles import Settings, validate_parameters


def notebook_setup(profile: str, seeds=None, device: str = "auto",
                   allow_cpu: bool = False) -> Settings:
    """Validate papermill parameters; raise ValueError naming the parameter.

    ``seeds=None`` means the profile's default number of seeds. The gpu profile without
    a CUDA device stops with the predicted training time of its runs on this CPU, unless
    ``allow_cpu``.
    """
    settings = validate_parameters(profile, seeds, device)
    import pandas as pd
    # the chapters' tables carry sentences (a gated verdict's reason): shown whole
    pd.set_option("display.max_colwidth", None)
    from .figure_text import register
    register()  # every figure records its smallest text's size, for the book's check
    if profile == "gpu" and not allow_cpu:
        import torch
        if device == "cpu" or not torch.cuda.is_available():
            from ..studies.driver import cpu_prediction_text
            raise ValueError(f"profile 'gpu' without a CUDA device: "
                             f"{cpu_prediction_text(len(settings.seeds))}; "
                             f"pass allow_cpu=True to train it here anyway")
    return settings
