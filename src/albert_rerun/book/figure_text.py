"""Moved to ``figures``; this name goes when the modules that import it follow."""
from .figures import *  # noqa: F401,F403
