"""ALBERT, re-run: the package behind the reproducibility book.

Layers, each importing only from those before it (ARCHITECTURE.md): ``model`` and
``data``, ``engine`` (one run: pretraining, evaluation, fine-tuning, the store),
``stats``, ``studies`` (what to train and how to judge it) and ``book`` (values, tables,
figures and the build); ``profiles`` says how large a run is.
"""
from .model.config import PRESETS, ModelConfig, preset
from .model.modeling import AlbertForPreTraining, AlbertForSequenceClassification, AlbertModel

__all__ = ["ModelConfig", "preset", "PRESETS", "AlbertModel", "AlbertForPreTraining",
           "AlbertForSequenceClassification"]
__version__ = "0.2.0"
