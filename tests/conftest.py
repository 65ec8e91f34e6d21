import shutil
from pathlib import Path

import pytest
import torch

from albert_rerun.engine.pretrain import cpu_threads

# Deterministic, quiet CPU runs for every test.
torch.manual_seed(0)

# One torch thread: the engine's own reading of $ALBERT_RERUN_THREADS, which the root
# conftest.py sets for the tests and what they start.
torch.set_num_threads(cpu_threads())


@pytest.fixture
def tiny_config():
    """HF's own ALBERT test size: V 32... scaled so that every component is present."""
    from albert_rerun import ModelConfig
    return ModelConfig(vocab_size=99, embedding_size=16, hidden_size=36, num_hidden_layers=6,
                       num_attention_heads=6, intermediate_size=37, max_position_embeddings=64,
                       sharing="all", num_hidden_groups=1)


@pytest.fixture
def single_thread(monkeypatch):
    """One torch thread for the tiny models of the engine tests: the engine reads
    $ALBERT_RERUN_THREADS, and a second thread only spins on a CPU the tests share
    with other work (ten times slower, same numbers). Restored afterwards."""
    threads = torch.get_num_threads()
    monkeypatch.setenv("ALBERT_RERUN_THREADS", "1")
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tokenizer():
    from albert_rerun.data.tokenizer import Tokenizer
    return Tokenizer()


@pytest.fixture(scope="session")
def validation(tokenizer, tmp_path_factory):
    """The validation split, tokenized afresh into a temporary cache."""
    from albert_rerun.data.corpus import tokenize_split
    return tokenize_split("validation", tokenizer, cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A repository root under tmp_path ($ALBERT_RERUN_ROOT) whose data/ links every
    committed data file and the token cache (no results); ``data_copy(name)`` replaces
    the link of data/<name> by a real copy that a test may corrupt or delete."""
    from albert_rerun.data.files import data_dir
    source = data_dir()
    root = tmp_path / "root"
    for path in source.rglob("*"):
        relative = path.relative_to(source)
        if path.is_file() and relative.parts[0] != "results":
            target = root / "data" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    monkeypatch.setenv("ALBERT_RERUN_ROOT", str(root))

    def own_copy(name: str) -> Path:
        target = root / "data" / name
        target.unlink()
        shutil.copyfile(source / name, target)
        return target
    return own_copy


@pytest.fixture
def flip_byte():
    """Corrupt a file in place: one byte inverted."""
    def flip(path: Path, offset: int = 100) -> None:
        blob = bytearray(path.read_bytes())
        blob[offset] ^= 0xFF
        path.write_bytes(bytes(blob))
    return flip


@pytest.fixture
def results(tmp_path, monkeypatch):
    """An empty $ALBERT_RERUN_RESULTS: nothing a test writes reaches data/results."""
    path = tmp_path / "results"
    path.mkdir()
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(path))
    return path

