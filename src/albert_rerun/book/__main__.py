from .build import main

from ..cli import run_main

if __name__ == "__main__":  # the build's process pool spawns workers that import this
    raise SystemExit(run_main(main))
