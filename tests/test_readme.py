"""The README's commands name what exists: every `python -m` command's module, subcommand
and options parse as written (nothing runs), every stretch names a store the script
trains, every make target is in the Makefile, and the papermill example passes
parameters its notebook declares."""
import argparse
import ast
import importlib
import re
import shlex

import pytest

from albert_rerun.paths import repo_root

ROOT = repo_root()


def commands() -> list:
    """The README's shell lines: ```bash blocks, continuations joined, comments cut."""
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#")[0].strip()
            if line:
                lines.append(line)
    return lines


def module_commands() -> list:
    out = []
    for line in commands():
        words = shlex.split(line)
        if "-m" in words:
            at = words.index("-m")
            out.append((words[at + 1], words[at + 2:]))
    return out


class Parsed(Exception):
    pass


def main_of(module: str):
    """The ``main`` that ``python -m module`` calls (a package's __main__ imports it)."""
    spec = importlib.util.find_spec(module)
    if spec.submodule_search_locations:  # a package: read which main its __main__ runs
        source = (ROOT / "src" / module.replace(".", "/") / "__main__.py").read_text()
        found = [node for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.ImportFrom) and any(a.name == "main"
                                                             for a in node.names)]
        assert found, f"{module}/__main__.py imports no main"
        module = f"{module}.{found[0].module}"
    return importlib.import_module(module).main


def test_the_readme_has_commands_of_each_kind():
    kinds = {line.split()[0] for line in commands()}
    assert {"make", "scripts/train_stretch.sh", "python"} <= kinds
    assert len(module_commands()) >= 10


@pytest.mark.parametrize("module, argv", module_commands(),
                         ids=[" ".join([m, *a]) for m, a in module_commands()])
def test_each_module_command_parses_as_written(module, argv, monkeypatch):
    parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        raise Parsed(parse(self, args, namespace))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    with pytest.raises(Parsed):  # argparse's own error would be SystemExit(2)
        main_of(module)(argv)


def test_each_stretch_names_a_store_the_script_trains():
    script = (ROOT / "scripts" / "train_stretch.sh").read_text()
    studies = set(re.findall(r"^  ([a-z-]+)\) module=", script, re.M))
    from albert_rerun.profiles import PROFILES
    stretches = [shlex.split(line)[1:] for line in commands()
                 if line.startswith("scripts/train_stretch.sh")]
    assert len(stretches) >= 4
    for store, hours in stretches:
        assert store in studies or store in PROFILES, store
        assert float(hours) > 0


def test_each_make_target_and_the_papermill_parameters_exist():
    makefile = (ROOT / "Makefile").read_text()
    for line in commands():
        if line.startswith("make "):
            assert re.search(rf"^{line.split()[1]}:", makefile, re.M), line
    import nbformat
    for line in commands():
        words = shlex.split(line)
        if words[0].endswith("papermill"):
            notebook = nbformat.read(ROOT / words[1], as_version=4)
            cell = next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
            declared = set(re.findall(r"^(\w+)\s*=", cell.source, re.M))
            given = {words[i + 1] for i, w in enumerate(words) if w == "-p"}
            assert given and given <= declared, (given, declared)
