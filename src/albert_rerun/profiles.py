"""Run profiles and the validation of a notebook's papermill parameters.

One place defines what ``smoke``, ``cpu`` and ``gpu`` mean. A notebook calls
:func:`notebook_setup` first so that a bad parameter stops it at once with a
message naming the parameter and the allowed values.
"""
from __future__ import annotations

from dataclasses import dataclass

DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class Profile:
    """How large the runs behind a chapter are."""

    name: str
    description: str  # one line for the README and the methods page
    default_seeds: int  # seeds per condition for the empirical chapters
    expected_minutes: str  # rough wall time of the whole book on the named machine


PROFILES = {
    "smoke": Profile("smoke", "seconds per notebook; what CI executes and compares", 1,
                     "about 1 minute on 2 CPU cores"),
    "cpu": Profile("cpu", "the published book: the sizes a 2-core CPU affords", 3,
                   "minutes for the exact chapters on 2 CPU cores"),
    "gpu": Profile("gpu", "larger models and more seeds for one modern GPU", 5,
                   "about 8 minutes per empirical chapter on one H100/H200"),
}


@dataclass(frozen=True)
class Settings:
    """The validated parameters of one notebook run."""

    profile: Profile
    seeds: tuple
    device: str


def notebook_setup(profile: str, seeds=None, device: str = "auto") -> Settings:
    """Validate papermill parameters; raise ValueError naming the parameter.

    ``seeds=None`` means the profile's default number of seeds.
    """
    if not isinstance(profile, str) or profile not in PROFILES:
        raise ValueError(f"parameter 'profile' must be one of {tuple(PROFILES)}, "
                         f"got {profile!r}")
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int)
                              or seeds < 1):
        raise ValueError(f"parameter 'seeds' must be an integer >= 1 (or None for the "
                         f"profile's default), got {seeds!r}")
    if not isinstance(device, str) or device not in DEVICES:
        raise ValueError(f"parameter 'device' must be one of {DEVICES}, got {device!r}")
    if device == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise ValueError("parameter 'device' is 'cuda' but no CUDA device is "
                             "available; use 'auto' or 'cpu'")
    chosen = PROFILES[profile]
    count = seeds or chosen.default_seeds
    return Settings(chosen, tuple(range(count)), device)
