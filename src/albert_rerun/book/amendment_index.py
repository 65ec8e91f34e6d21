"""Kept for old imports until they name ``book.preregistration``, which holds this code."""
import sys

from . import preregistration

sys.modules[__name__] = preregistration
