from .driver import main

from ..cli import run_main

raise SystemExit(run_main(main))
