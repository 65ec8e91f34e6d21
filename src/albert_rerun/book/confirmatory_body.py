"""Kept for old imports until they name ``book.confirmatory``, which holds this code."""
import sys

from . import confirmatory

sys.modules[__name__] = confirmatory
