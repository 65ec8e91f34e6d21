"""ALBERT, re-run: model, parameter accounting, profiles and provenance for the book."""
from .config import PRESETS, ModelConfig, preset
from .model import AlbertForPreTraining, AlbertForSequenceClassification, AlbertModel

__all__ = ["ModelConfig", "preset", "PRESETS", "AlbertModel", "AlbertForPreTraining",
           "AlbertForSequenceClassification"]
__version__ = "0.1.0"
