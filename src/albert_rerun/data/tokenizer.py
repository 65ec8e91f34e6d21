"""SentencePiece unigram tokenizer, trained on the training split as ALBERT's spm_train.

The official command: unigram model, pad 0, unk 1, no bos/eos, control symbols
[CLS] [SEP] [MASK]. We train on every sentence of the training split, unshuffled and
single-threaded, so the same parameters give the same file.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

from .files import data_dir, load_documents, sentences, verified

TOKENIZER_DIR = "tokenizer"
DEFAULT_VOCAB_SIZE = 8000


def training_parameters(vocab_size: int) -> dict:
    """spm_train flags, as the official command but for our vocabulary size."""
    return {"vocab_size": vocab_size, "model_type": "unigram",
            "character_coverage": 0.99995, "pad_id": 0, "unk_id": 1, "bos_id": -1,
            "eos_id": -1, "control_symbols": "[CLS],[SEP],[MASK]",
            "user_defined_symbols": ["(", ")", "\"", "-", ".", "–", "£", "€"], "shuffle_input_sentence": False,
            "input_sentence_size": 0, "num_threads": 1, "seed_sentencepiece_size": 1000000,
            "max_sentence_length": 8192, "train_extremely_large_corpus": False}


def model_name(vocab_size: int) -> str:
    return f"{TOKENIZER_DIR}/spm_unigram_{vocab_size}.model"


def train(vocab_size: int = DEFAULT_VOCAB_SIZE, output: Path | None = None) -> Path:
    """Train the tokenizer on the training split; write the model and its parameters."""
    import sentencepiece as spm
    lines = [s for doc in load_documents("train") for p in doc["paragraphs"]
             for s in sentences(p)]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model,
                                   **training_parameters(vocab_size))
    output = output or data_dir() / model_name(vocab_size)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(model.getvalue())
    output.with_suffix(".json").write_text(json.dumps(
        {"trained_on": "data/corpus/train.jsonl.xz (every sentence, in order)",
         "sentencepiece_parameters": training_parameters(vocab_size)}, indent=1) + "\n")
    return output


class Tokenizer:
    """Thin wrapper: ids of the special symbols and whole-word starts."""

    def __init__(self, vocab_size: int = DEFAULT_VOCAB_SIZE, path: Path | None = None):
        import sentencepiece as spm
        path = path or verified(model_name(vocab_size))
        self.path = Path(path)
        self.sp = spm.SentencePieceProcessor(model_file=str(path))
        self.vocab_size = self.sp.get_piece_size()
        self.pad_id, self.unk_id = 0, 1
        self.cls_id = self.sp.piece_to_id("[CLS]")
        self.sep_id = self.sp.piece_to_id("[SEP]")
        self.mask_id = self.sp.piece_to_id("[MASK]")
        # A piece starts a word if it begins with the SentencePiece space mark "▁"
        # (the official masking's whole-word rule); specials count as words.
        self.word_start = [self.sp.id_to_piece(i).startswith("\u2581") or self.sp.is_control(i)
                           or i in (self.unk_id,) for i in range(self.vocab_size)]
        self.special = [self.sp.is_control(i) or i == self.pad_id
                        for i in range(self.vocab_size)]

    def encode(self, texts):
        return self.sp.encode(texts)
