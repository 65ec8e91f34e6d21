"""Map HF transformers' ALBERT/BERT pretraining state dicts onto this package's names.

Works on plain state dicts, so the package never imports transformers. Used by the
parity tests, and to load a released checkpoint into our model.
"""
from __future__ import annotations

import torch

from .config import ModelConfig

def _qkv(target: dict, source: dict, ours: str, theirs: str) -> None:
    """HF's separate query/key/value -> our fused qkv (rows stacked q, k, v)."""
    for suffix in ("weight", "bias"):
        target[f"{ours}.qkv.{suffix}"] = torch.cat(
            [source[f"{theirs}.{name}.{suffix}"] for name in ("query", "key", "value")])


def _copy(target: dict, source: dict, ours: str, theirs: str) -> None:
    for suffix in ("weight", "bias"):
        target[f"{ours}.{suffix}"] = source[f"{theirs}.{suffix}"]


def _embeddings(target: dict, source: dict, prefix: str) -> None:
    for name in ("word_embeddings", "position_embeddings", "token_type_embeddings"):
        target[f"albert.embeddings.{name}.weight"] = source[f"{prefix}.embeddings.{name}.weight"]
    _copy(target, source, "albert.embeddings.LayerNorm", f"{prefix}.embeddings.LayerNorm")


def from_hf_albert(source: dict, config: ModelConfig) -> dict:
    """AlbertForPreTraining (grouped sharing, inner_group_num 1) -> ours.

    Only ``sharing="all"`` has an HF counterpart: HF shares whole layers by group.
    """
    if config.sharing != "all":
        raise ValueError("HF ALBERT shares whole layers; convert only sharing='all' configs")
    target: dict = {}
    _embeddings(target, source, "albert")
    if config.has_projection:
        _copy(target, source, "albert.encoder.embedding_hidden_mapping_in",
              "albert.encoder.embedding_hidden_mapping_in")
    for g in range(config.num_hidden_groups):
        layer = f"albert.encoder.albert_layer_groups.{g}.albert_layers.0"
        ours = f"albert.encoder.attention_blocks.{g}"
        _qkv(target, source, ours, f"{layer}.attention")
        for name in ("dense", "LayerNorm"):
            _copy(target, source, f"{ours}.{name}", f"{layer}.attention.{name}")
        _copy(target, source, f"albert.encoder.ffn_blocks.{g}.ffn", f"{layer}.ffn")
        _copy(target, source, f"albert.encoder.ffn_blocks.{g}.ffn_output", f"{layer}.ffn_output")
        _copy(target, source, f"albert.encoder.ffn_blocks.{g}.LayerNorm",
              f"{layer}.full_layer_layer_norm")
    _copy(target, source, "albert.pooler.dense", "albert.pooler")
    _copy(target, source, "mlm_head.dense", "predictions.dense")
    _copy(target, source, "mlm_head.LayerNorm", "predictions.LayerNorm")
    target["mlm_head.bias"] = source["predictions.bias"]
    _copy(target, source, "sentence_head.classifier", "sop_classifier.classifier")
    return target


def from_hf_bert(source: dict, config: ModelConfig) -> dict:
    """BertForPreTraining (E == H, no projection, no sharing) -> ours."""
    if config.sharing != "none" or config.has_projection:
        raise ValueError("BERT has no sharing and no embedding projection")
    target: dict = {}
    _embeddings(target, source, "bert")
    for i in range(config.num_hidden_layers):
        layer = f"bert.encoder.layer.{i}"
        ours = f"albert.encoder.attention_blocks.{i}"
        _qkv(target, source, ours, f"{layer}.attention.self")
        _copy(target, source, f"{ours}.dense", f"{layer}.attention.output.dense")
        _copy(target, source, f"{ours}.LayerNorm", f"{layer}.attention.output.LayerNorm")
        ours = f"albert.encoder.ffn_blocks.{i}"
        _copy(target, source, f"{ours}.ffn", f"{layer}.intermediate.dense")
        _copy(target, source, f"{ours}.ffn_output", f"{layer}.output.dense")
        _copy(target, source, f"{ours}.LayerNorm", f"{layer}.output.LayerNorm")
    _copy(target, source, "albert.pooler.dense", "bert.pooler.dense")
    _copy(target, source, "mlm_head.dense", "cls.predictions.transform.dense")
    _copy(target, source, "mlm_head.LayerNorm", "cls.predictions.transform.LayerNorm")
    target["mlm_head.bias"] = source["cls.predictions.bias"]
    _copy(target, source, "sentence_head.classifier", "cls.seq_relationship")
    return target
