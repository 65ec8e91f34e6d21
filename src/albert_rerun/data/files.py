"""The committed corpus and task files: checksummed loading and sentence splitting.

Every file under data/ that a run reads is listed in data/MANIFEST.sha256; a missing
or corrupt file stops with the file, both checksums and how to rebuild it.
"""
from __future__ import annotations

import hashlib
import json
import lzma
import re
from functools import lru_cache
from pathlib import Path

from ..paths import repo_root

SPLITS = ("train", "validation", "test")
TASKS = {"sentiment": "movie-review snippets, label = sign of the mean human rating",
         "genre": "Brown corpus paragraphs (15+ words), label = one of 15 genres"}
REBUILD = "rebuild it with `.venv/bin/python data/build.py` (see data/README.md) " \
          "or restore it with `git checkout -- data/`"


class DataError(RuntimeError):
    """A data file is missing, corrupt, or not what the manifest promises."""


def data_dir() -> Path:
    return repo_root() / "data"


@lru_cache(maxsize=None)
def manifest() -> dict:
    path = data_dir() / "MANIFEST.sha256"
    if not path.is_file():
        raise DataError(f"{path} is missing; {REBUILD}")
    entries = {}
    for line in path.read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            entries[name.strip()] = digest
    return entries


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(relative: str) -> Path:
    """The path of a data file after checking it against the manifest."""
    expected = manifest().get(relative)
    path = data_dir() / relative
    if expected is None:
        raise DataError(f"data/{relative} is not in data/MANIFEST.sha256; {REBUILD}")
    if not path.is_file():
        raise DataError(f"data/{relative} is missing (expected sha256 {expected}); {REBUILD}")
    actual = sha256(path)
    if actual != expected:
        raise DataError(f"data/{relative} is corrupt: sha256 {actual}, expected {expected}; "
                        f"{REBUILD}")
    return path


def read_jsonl_xz(relative: str) -> list:
    path = verified(relative)
    try:
        with lzma.open(path, "rt", encoding="utf-8") as handle:
            return [json.loads(line) for line in handle]
    except (lzma.LZMAError, json.JSONDecodeError, EOFError) as error:
        raise DataError(f"data/{relative} cannot be read ({error}); {REBUILD}") from error


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")


def load_documents(split: str) -> list:
    """Pretraining documents: dicts with id, source, title, meta, paragraphs."""
    _check_split(split)
    return read_jsonl_xz(f"corpus/{split}.jsonl.xz")


def load_task(task: str, split: str) -> tuple:
    """A downstream task split as (texts, integer labels, label names)."""
    _check_split(split)
    if task not in TASKS:
        raise ValueError(f"task must be one of {tuple(TASKS)}, got {task!r}")
    rows = read_jsonl_xz(f"tasks/{task}/{split}.jsonl.xz")
    names = label_names(task)
    index = {name: i for i, name in enumerate(names)}
    return [r["text"] for r in rows], [index[str(r["label"])] for r in rows], list(names)


@lru_cache(maxsize=None)
def label_names(task: str) -> tuple:
    """A task's labels as strings, in a fixed order, read once from its training split."""
    rows = read_jsonl_xz(f"tasks/{task}/train.jsonl.xz")
    return tuple(sorted({str(r["label"]) for r in rows}))


_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(\s+)(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATIONS = re.compile(r"\b(Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|e\.g|i\.e|No|Gen|Col|Capt|Lt)\.$")


def sentences(paragraph: str) -> list:
    """Split a paragraph into sentences (the units ALBERT's example builder packs)."""
    pieces, start = [], 0
    for match in _SENTENCE_END.finditer(paragraph):
        candidate = paragraph[start:match.start(1)].strip()
        if candidate and not _ABBREVIATIONS.search(candidate):
            pieces.append(candidate)
            start = match.end(1)
    tail = paragraph[start:].strip()
    if tail:
        pieces.append(tail)
    return pieces


def verify_inputs(vocab_sizes=(8000,)) -> None:
    """Check every data file a pretraining run and its evaluation read (corpus splits,
    tokenizer, task splits) against the manifest; the first missing or corrupt one stops
    with its name, both checksums and how to restore it. Runs call this before step 0."""
    names = [f"corpus/{split}.jsonl.xz" for split in ("train", "validation")]
    names += [f"tasks/{task}/{split}.jsonl.xz" for task in TASKS for split in SPLITS]
    names += [f"tokenizer/spm_unigram_{v}.model" for v in vocab_sizes]
    for name in names:
        verified(name)
