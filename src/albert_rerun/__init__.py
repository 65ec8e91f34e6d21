"""ALBERT, re-run: the package behind the reproducibility book.

Layers, each a folder: ``model`` (configuration, the ALBERT/BERT modules, parameter
accounting, HF weight conversion), ``data`` (checksummed corpus and tasks, tokenizer,
segment pairs, masking), ``engine`` (pretraining, evaluation, fine-tuning, the results
store, provenance, benchmarks), ``claims`` (each claim's conditions, the training
driver, statistics and analysis), ``book`` (papermill and Jupyter Book). ``profiles``
says how large a run is at ``smoke``, ``cpu`` and ``gpu``.
"""
from .model.config import PRESETS, ModelConfig, preset
from .model.modeling import AlbertForPreTraining, AlbertForSequenceClassification, AlbertModel

__all__ = ["ModelConfig", "preset", "PRESETS", "AlbertModel", "AlbertForPreTraining",
           "AlbertForSequenceClassification"]
__version__ = "0.2.0"
