"""The command lines' one way to stop on bad input: a single line, a non-zero status.

A bad data file (``DataError``), a weight file failing its checksum (``WeightsError``) or a
value out of range (``ValueError``) is the user's to fix and its message says how; a
traceback would hide that line (``ALBERT_RERUN_TRACEBACK=1`` keeps it).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

EXIT_BAD_INPUT = 2  # as argparse exits on a bad argument


def one_line(error: BaseException) -> str:
    """``error: <kind>: <message>`` on one line (a message's own line breaks joined)."""
    kind = error.__class__.__name__
    return f"error: {kind}: {' '.join(str(error).split()) or kind}"


def run_main(main: Callable[..., int], argv=None) -> int:
    """Call a command's ``main(argv)``; on a user error print one line to stderr and
    return ``EXIT_BAD_INPUT``."""
    from .data.files import DataError
    from .engine.store import WeightsError
    try:
        return main(argv)
    except (DataError, WeightsError, ValueError) as error:
        if os.environ.get("ALBERT_RERUN_TRACEBACK") == "1":
            raise
        print(one_line(error), file=sys.stderr, flush=True)
        return EXIT_BAD_INPUT


def positive_int(text: str) -> int:
    """argparse's ``type`` for a count of at least 1: a bad value stops the command
    with argparse's one-line usage error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
