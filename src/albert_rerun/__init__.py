"""ALBERT, re-run: the package behind the reproducibility book.

Layers, each a folder importing only from those before it (ARCHITECTURE.md): ``model``
and ``data`` (the modules, the corpus, tokenizer, masking), ``engine`` (one run:
pretraining, evaluation, fine-tuning, the results store), ``stats`` (intervals, tests,
Holm, power), ``studies`` (what to train and how to judge it, and the driver),
``chapters`` (one module per claim), ``pages`` (words, tables and figures), ``book``
(papermill and Jupyter Book). ``profiles`` says how large a run is at ``smoke``,
``cpu``, ``cpu-long`` and ``gpu``.
"""
from .model.config import PRESETS, ModelConfig, preset
from .model.modeling import AlbertForPreTraining, AlbertForSequenceClassification, AlbertModel

__all__ = ["ModelConfig", "preset", "PRESETS", "AlbertModel", "AlbertForPreTraining",
           "AlbertForSequenceClassification"]
__version__ = "0.2.0"
