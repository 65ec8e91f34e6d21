"""How a reader reruns a chapter: the box at each chapter's end (``add_rerun_box``), the
configuration with a repository's buttons (``repository_config``), and a Sphinx extension
pointing a chapter's launch buttons at its notebook and offering its ``.md`` source."""
from __future__ import annotations

import functools
import re
from pathlib import Path

import yaml

from ..profiles import ResolvedProfile

# The claims whose runs each chapter trains and reads: () none, None every claim (the ledger)
CHAPTER_CLAIMS = {
    "00_recipe": (), "01_embedding_share": (), "02_sharing_reductions": (),
    "03_asymmetry": ("asymmetry", "grouped"), "04_sop_nsp": ("sop_nsp",),
    "05_dropout": ("dropout",), "06_wall_clock": ("wall_clock",),
    "07_transitions": ("transitions",), "08_embedding_size": ("embedding_sweep",),
    "09_ledger": None,
}
# sphinx-book-theme's launch buttons, set only with a repository (they need its URL).
LAUNCH_BUTTONS = {"colab_url": "https://colab.research.google.com",
                  "binderhub_url": "https://mybinder.org", "notebook_interface": "classic"}
REPOSITORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+")
BOX_CLASS = "rerun-chapter"
KERNEL = "python3"  # the Jupyter kernel papermill runs the chapters in (book.build too)


# -- the box ----------------------------------------------------------------------------

def papermill_command(stem: str, profile: str) -> str:
    """The command that runs chapter ``stem`` at ``profile`` from the repository's root."""
    device = " -p device cuda" if profile == "gpu" else ""
    return (f".venv/bin/papermill notebooks/{stem}.ipynb {stem}-{profile}.ipynb "
            f"-k {KERNEL} --cwd notebooks -p profile {profile}{device}")


def gpu_name() -> str:
    """The GPU of the stored measurement that times the GPU predictions."""
    import json

    from ..engine.bench import stored_gpu_bench
    record = json.loads(stored_gpu_bench().read_text())
    return record.get("provenance", {}).get("machine", {}).get("gpu") or "GPU"


def duration(seconds: float) -> str:
    """``seconds`` as "40 s", "12 min", "3.5 h" or "1,200 h"."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    hours = seconds / 3600
    return f"{hours:,.0f} h" if hours >= 100 else f"{hours:.1f} h"


@functools.lru_cache(maxsize=None)
def planned(profile: ResolvedProfile, claims: tuple | None = None) -> tuple:
    """(trained runs, zero-step controls) that ``claims`` (None: all) pretrain."""
    from ..studies.driver import planned_pretraining
    names = None if claims is None else list(claims)
    configs = [c for stage in planned_pretraining(profile, names=names).values() for c in stage]
    return [c for c in configs if c.max_steps > 0], [c for c in configs if c.max_steps == 0]


def runs_text(profile: ResolvedProfile, claims) -> str:
    """The runs ``claims`` train at ``profile``, how many are stored, their predicted time."""
    from ..studies.driver import predicted_seconds
    from ..engine.store import stored_pretrain
    from ..paths import repo_root
    from .text import fill
    trained, controls = planned(profile, tuple(claims))
    store = repo_root() / "data" / "results" / profile.name
    stored = sum(stored_pretrain(store, c) is not None for c in trained + controls)
    text = fill("rerun-runs", trained=len(trained), controls=len(controls), stored=stored,
                profile=profile.name)
    if profile.name == "smoke":
        return f"{text} {fill('rerun-smoke')}"
    cpu, gpu = (duration(predicted_seconds(trained, kind)) for kind in ("cpu", "cuda"))
    lower = "" if profile.name == "gpu" else " (a lower bound: smaller models use less of it)"
    return f"{text} {fill('rerun-predicted', cpu=cpu, gpu=gpu, gpu_name=gpu_name(), lower=lower)}"


def profile_paragraph(stem: str, profile: ResolvedProfile) -> list:
    """The box's lines for one profile: what the chapter trains there, and the command."""
    from ..studies.conditions import profile_claims
    from .text import fill
    claims = CHAPTER_CLAIMS[stem]
    carried = profile_claims(profile)
    head = f"**`{profile.name}`**"
    command = ["```bash", papermill_command(stem, profile.name), "```", ""]
    if claims == ():
        return [f"{head}:", ""] + command
    mine = carried if claims is None else [c for c in claims if c in carried]
    left = [] if claims is None else [c for c in claims if c not in carried]
    if not mine:
        return [fill("rerun-not-carried", head=head, s="s" * (len(left) > 1),
                     left=", ".join(left), carried=", ".join(carried)), ""]
    names = ", ".join(mine) + (f"; it does not carry {', '.join(left)}" if left else "")
    body = (f"{'every claim' if claims is None else 'this chapter'} ({names}): "
            + runs_text(profile, mine))
    if claims is not None:  # the chapter builds the book's decision family first
        body += " " + fill("rerun-family", runs=len(planned(profile, tuple(carried))[0]))
    return [f"{head}: {body}", ""] + command


def rerun_box(stem: str) -> str:
    """The "Rerun this chapter" box of chapter ``stem`` (MyST markdown)."""
    from ..profiles import PROFILES, resolve
    if stem not in CHAPTER_CLAIMS:
        raise ValueError(f"no claims listed for chapter {stem!r} in CHAPTER_CLAIMS")
    from ..paths import fill
    trains = CHAPTER_CLAIMS[stem] != ()
    profiles = [line for p in PROFILES for line in profile_paragraph(stem, resolve(p))]
    return fill("rerun-box.md", {
        "box_class": BOX_CLASS, "stem": stem,
        "trains": ":" if trains else "; it trains nothing at any of them:",
        "profiles": "\n".join(profiles),
        "closing": fill("rerun-box-stored.md", {}) if trains else ""})


def add_rerun_box(notebook_path: Path, stem: str) -> None:
    """Append the box at the end of the chapter."""
    import nbformat
    notebook = nbformat.read(notebook_path, as_version=4)
    cell = nbformat.v4.new_markdown_cell(rerun_box(stem))
    cell.metadata["tags"] = [BOX_CLASS]
    notebook.cells.append(cell)
    nbformat.write(notebook, notebook_path)


# -- the repository's buttons -----------------------------------------------------------

def repository_config(root: Path, repository: str, branch: str = "main") -> Path:
    """``_config.yml`` with the repository's button and launch buttons, written to
    ``_build/`` for ``jupyter-book build --config``."""
    if not REPOSITORY.fullmatch(repository):
        raise ValueError(f"repository must be GitHub's owner/name, got {repository!r}")
    config = yaml.safe_load((root / "_config.yml").read_text())
    config["repository"] = {"url": f"https://github.com/{repository}", "branch": branch,
                            "path_to_book": ""}
    config["launch_buttons"] = dict(LAUNCH_BUTTONS)
    config.setdefault("html", {})["use_repository_button"] = True
    path = root / "_build" / "_config.repository.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


# -- the Sphinx extension -----------------------------------------------------------------

def _group(context: dict, label: str):
    return next((b for b in context.get("header_buttons", [])
                 if b.get("type") == "group" and b.get("label") == label), None)


def chapter_buttons(app, pagename, templatename, context, doctree) -> None:
    """On a chapter page: the launch buttons open ``notebooks/<name>.ipynb``; the download
    button also offers ``notebooks/<name>.md``."""
    from shutil import copyfile

    from sphinx.util import logging
    source = Path(app.srcdir) / "notebooks" / f"{Path(pagename).name}.md"
    if not pagename.startswith("book/chapters/") or not source.is_file():
        return
    logger = logging.getLogger(__name__)
    launch = _group(context, "launch-buttons")
    if launch is not None:
        rendered, target = f"{pagename}.ipynb", f"notebooks/{source.stem}.ipynb"
        for button in (b for b in launch["buttons"] if b.get("type") == "link"):
            if button["url"].endswith(rendered):
                button["url"] = button["url"][: -len(rendered)] + target
            else:
                logger.warning(f"launch button {button['url']} does not end with "
                               f"{rendered}: cannot point it at {target}")
    downloads = _group(context, "download-buttons")
    if downloads is None:
        logger.warning(f"{pagename}: no download button to add the .md source to")
        return
    copy = Path(app.outdir) / "_sources" / f"{pagename}.md"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copyfile(source, copy)
    at = next((i + 1 for i, b in enumerate(downloads["buttons"])
               if b.get("label") == "download-source-button"), 0)
    downloads["buttons"].insert(at, {
        "type": "link", "url": f"{context['pathto']('_sources', 1)}/{pagename}.md",
        "text": ".md", "tooltip": "Download the notebook's MyST source",
        "icon": "fab fa-markdown", "label": "download-md-button"})


def setup(app):
    # after sphinx-book-theme's header and launch buttons (priority 501)
    app.connect("html-page-context", chapter_buttons, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
