"""The root conftest.py's scheduler names test files by path: a renamed or removed file
would silently drop out of its order (the book's unit first, then the long few)."""
from pathlib import Path

from albert_rerun.paths import repo_root


def test_every_file_the_scheduler_names_exists_once(request):
    # the root conftest.py as pytest loaded it (importing it again would give this
    # process another results store)
    (conftest,) = [plugin for plugin in request.config.pluginmanager.get_plugins()
                   if Path(getattr(plugin, "__file__", "") or "/") == repo_root() / "conftest.py"]
    named = [*conftest.BOOK_GROUP, *conftest.LONG_FEW]
    assert len(named) == len(set(named))
    missing = [path for path in named if not (repo_root() / path).is_file()]
    assert missing == []
