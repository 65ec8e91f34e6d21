"""ALBERT and BERT in one small PyTorch model.

Class names follow the paper and HF ``modeling_albert.py``. BERT is the special
case E == H, no projection, ``sharing="none"``. Shapes: B batch, T tokens,
E embedding width, H hidden width, V vocabulary, N masked positions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from .config import ModelConfig

_ACTIVATIONS = {
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),  # TF ALBERT's gelu
    "gelu": F.gelu,  # exact erf form, BERT's
    "relu": F.relu,
}


class Embeddings(nn.Module):
    """Word, position and token-type embeddings in E, normalized (ALBERT Sec. 3.1)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        E = config.embedding_size
        self.word_embeddings = nn.Embedding(config.vocab_size, E,
                                            padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, E)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, E)
        self.LayerNorm = nn.LayerNorm(E, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        T = input_ids.shape[1]
        positions = torch.arange(T, device=input_ids.device)
        x = (self.word_embeddings(input_ids) + self.position_embeddings(positions)
             + self.token_type_embeddings(token_type_ids))  # (B, T, E)
        return self.dropout(self.LayerNorm(x))


class Attention(nn.Module):
    """Multi-head self-attention with its residual and post-LayerNorm."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        H = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.qkv = nn.Linear(H, 3 * H)  # query, key, value in one matmul (faster on CPU)
        self.dense = nn.Linear(H, H)
        self.attention_dropout = config.attention_probs_dropout_prob
        self.output_dropout = nn.Dropout(config.hidden_dropout_prob)
        self.LayerNorm = nn.LayerNorm(H, eps=config.layer_norm_eps)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
        B, T, H = x.shape
        heads = self.num_heads

        # (B, T, 3H) -> 3 x (B, heads, T, H / heads)
        q, k, v = self.qkv(x).view(B, T, 3, heads, H // heads).permute(2, 0, 3, 1, 4)
        context = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=self.attention_dropout if self.training else 0.0)
        context = context.transpose(1, 2).reshape(B, T, H)
        return self.LayerNorm(x + self.output_dropout(self.dense(context)))  # (B, T, H)


class FeedForward(nn.Module):
    """Position-wise FFN (H -> I -> H) with its residual and post-LayerNorm."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.ffn = nn.Linear(config.hidden_size, config.intermediate_size)
        self.ffn_output = nn.Linear(config.intermediate_size, config.hidden_size)
        self.activation = _ACTIVATIONS[config.hidden_act]
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ffn_output(self.activation(self.ffn(x)))
        return self.LayerNorm(x + self.dropout(h))  # (B, T, H)


class Transformer(nn.Module):
    """L layers drawn from a pool of attention and FFN blocks: cross-layer sharing.

    ``sharing="all"`` with G groups is ALBERT (layer i applies block i*G//L);
    ``"attention"``/``"ffn"`` share only that sub-block (the paper's Table 4);
    ``"none"`` gives every layer its own blocks, as BERT.
    """

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        if config.has_projection:
            self.embedding_hidden_mapping_in = nn.Linear(config.embedding_size,
                                                         config.hidden_size)
        else:
            self.embedding_hidden_mapping_in = nn.Identity()
        self.attention_blocks = nn.ModuleList(
            Attention(config) for _ in range(config.num_attention_blocks))
        self.ffn_blocks = nn.ModuleList(
            FeedForward(config) for _ in range(config.num_ffn_blocks))
        self._schedule = [(config.attention_block_index(i), config.ffn_block_index(i))
                          for i in range(config.num_hidden_layers)]

    def forward(self, embeddings: torch.Tensor, mask: Optional[torch.Tensor],
                output_hidden_states: bool = False):
        x = self.embedding_hidden_mapping_in(embeddings)  # (B, T, E) -> (B, T, H)
        states = [x] if output_hidden_states else None
        for a, f in self._schedule:
            x = self.ffn_blocks[f](self.attention_blocks[a](x, mask))
            if states is not None:
                states.append(x)
        return x, states


class Pooler(nn.Module):
    """Dense + tanh on the first ([CLS]) token."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, sequence: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(sequence[:, 0]))  # (B, H)


class MLMHead(nn.Module):
    """H -> E transform, then logits against the (tied) word embeddings plus a bias."""

    def __init__(self, config: ModelConfig, word_embeddings: nn.Embedding):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.embedding_size)
        self.activation = _ACTIVATIONS[config.hidden_act]
        self.LayerNorm = nn.LayerNorm(config.embedding_size, eps=config.layer_norm_eps)
        self.word_embeddings = [word_embeddings]  # a list, so the tied weight counts once
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        h = self.LayerNorm(self.activation(self.dense(hidden)))  # (..., E)
        return F.linear(h, self.word_embeddings[0].weight, self.bias)  # (..., V)


class SentencePairHead(nn.Module):
    """Two-way classifier on the pooled output: SOP (ALBERT) or NSP (BERT)."""

    def __init__(self, config: ModelConfig, num_labels: int = 2):
        super().__init__()
        self.dropout = nn.Dropout(config.classifier_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, num_labels)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.dropout(pooled))  # (B, num_labels)


def init_weights(module: nn.Module, std: float) -> None:
    """BERT/ALBERT initialization: N(0, std) weights, zero biases, unit LayerNorm."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=std)
    init_weights_fixed(module)


def init_parts(model: "AlbertForPreTraining") -> dict:
    """{key: module}: the parts ``init_draw="common"`` draws apart. The key of attention
    block i and FFN block i is the same in every sharing scheme, so a shared block is
    drawn as the first layer's block of the model that shares nothing."""
    encoder = model.albert.encoder
    parts = {0: model.albert.embeddings, 1: encoder.embedding_hidden_mapping_in,
             2: model.albert.pooler, 3: model.mlm_head, 4: model.sentence_head}
    parts.update({1000 + i: block for i, block in enumerate(encoder.attention_blocks)})
    parts.update({2000 + i: block for i, block in enumerate(encoder.ffn_blocks)})
    return parts


def _common_draw(model: "AlbertForPreTraining", base: int, std: float) -> None:
    for key, part in init_parts(model).items():
        generator = torch.Generator().manual_seed(base * 4099 + key)
        for module in part.modules():
            _init_with(module, std, generator)


def _init_with(module: nn.Module, std: float, generator: torch.Generator) -> None:
    """``init_weights`` with its normal draws from ``generator`` (on the CPU, then
    copied, so a part draws the same numbers on any device)."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        with torch.no_grad():
            draw = torch.randn(module.weight.shape, generator=generator) * std
            module.weight.copy_(draw)
    init_weights_fixed(module)


def init_weights_fixed(module: nn.Module) -> None:
    """The parts of ``init_weights`` that draw nothing: zero biases and padding row, unit
    LayerNorm."""
    with torch.no_grad():
        if isinstance(module, nn.Linear) and module.bias is not None:
            module.bias.zero_()
        if isinstance(module, nn.Embedding) and module.padding_idx is not None:
            module.weight[module.padding_idx].zero_()
        if isinstance(module, nn.LayerNorm):
            module.weight.fill_(1.0)
            module.bias.zero_()


def _init_positions(model: "AlbertModel", config: ModelConfig) -> None:
    if config.position_init == "sinusoidal":
        weight = model.embeddings.position_embeddings.weight
        with torch.no_grad():
            weight.copy_(sinusoidal_positions(*weight.shape, config.initializer_range))


def extended_attention_mask(attention_mask: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """(B, T) 1/0 padding mask -> (B, 1, 1, T) boolean mask for SDPA (True = attend)."""
    if attention_mask is None:
        return None
    return attention_mask[:, None, None, :].bool()


def sinusoidal_positions(positions: int, width: int, std: float) -> torch.Tensor:
    """Vaswani et al.'s sin/cos table, rescaled to the embeddings' standard deviation.

    An initialization only: the table stays a learned parameter. It gives attention a
    relative-position signal from step 0 (tried in the recipe search).
    """
    position = torch.arange(positions, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, width, 2, dtype=torch.float32)
                          * (-math.log(10000.0) / width))
    table = torch.zeros(positions, width)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency[: width // 2])
    return table * (std / table.std())


class AlbertModel(nn.Module):
    """The encoder: embeddings, (shared) transformer layers and pooler."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.embeddings = Embeddings(config)
        self.encoder = Transformer(config)
        self.pooler = Pooler(config)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None,
                output_hidden_states: bool = False):
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        x = self.embeddings(input_ids, token_type_ids)
        sequence, states = self.encoder(x, extended_attention_mask(attention_mask),
                                        output_hidden_states)
        return sequence, self.pooler(sequence), states  # (B, T, H), (B, H), list or None


@dataclass
class PreTrainingOutput:
    loss: Optional[torch.Tensor]
    mlm_loss: Optional[torch.Tensor]
    sentence_loss: Optional[torch.Tensor]
    mlm_logits: torch.Tensor  # (B, T, V), or (N, V) at the masked positions only
    sentence_logits: torch.Tensor  # (B, 2)
    hidden_states: Optional[list]


class AlbertForPreTraining(nn.Module):
    """Encoder + MLM head + sentence-pair head; loss = MLM CE + sentence-pair CE."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        # drawn before any block exists, so it does not depend on the arm's sharing
        base = int(torch.randint(0, 2**31 - 1, ())) if config.init_draw == "common" else 0
        self.albert = AlbertModel(config)
        self.mlm_head = MLMHead(config, self.albert.embeddings.word_embeddings)
        self.sentence_head = SentencePairHead(config)
        if config.init_draw == "common":
            _common_draw(self, base, config.initializer_range)
        else:
            self.apply(lambda m: init_weights(m, config.initializer_range))
        _init_positions(self.albert, config)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None,
                mlm_labels=None, sentence_labels=None, output_hidden_states=False,
                full_logits: bool = False, mlm_positions=None) -> PreTrainingOutput:
        """mlm_labels: (B, T) token ids, -100 where not predicted; or, with
        ``mlm_positions`` (B, P), (B, P) labels of those positions (-100 for padding
        slots): the static layout of the official code, the training engine's.

        With labels and ``full_logits=False`` the V-way logits are computed only at
        the masked positions, the largest saving at small H.
        """
        sequence, pooled, states = self.albert(input_ids, token_type_ids, attention_mask,
                                               output_hidden_states)
        sentence_logits = self.sentence_head(pooled)
        mlm_loss = sentence_loss = None
        if mlm_positions is not None:
            index = mlm_positions[..., None].expand(-1, -1, sequence.shape[-1])
            mlm_logits = self.mlm_head(sequence.gather(1, index))  # (B, P, V)
            if mlm_labels is not None:
                mlm_loss = F.cross_entropy(mlm_logits.flatten(0, 1).float(),
                                           mlm_labels.flatten(), ignore_index=-100)
        elif mlm_labels is not None and not full_logits:
            selected = mlm_labels != -100
            mlm_logits = self.mlm_head(sequence[selected])  # (N, V)
            mlm_loss = F.cross_entropy(mlm_logits, mlm_labels[selected])
        else:
            mlm_logits = self.mlm_head(sequence)  # (B, T, V)
            if mlm_labels is not None:
                mlm_loss = F.cross_entropy(mlm_logits.flatten(0, 1), mlm_labels.flatten(),
                                           ignore_index=-100)
        if sentence_labels is not None:
            sentence_loss = F.cross_entropy(sentence_logits.float(), sentence_labels)
        losses = [l for l in (mlm_loss, sentence_loss) if l is not None]
        loss = sum(losses) if losses else None
        return PreTrainingOutput(loss, mlm_loss, sentence_loss, mlm_logits,
                                 sentence_logits, states)


class AlbertForSequenceClassification(nn.Module):
    """Encoder + dropout + linear classifier on the pooled output, for fine-tuning."""

    def __init__(self, config: ModelConfig, num_labels: int):
        super().__init__()
        self.config = config
        self.albert = AlbertModel(config)
        self.dropout = nn.Dropout(config.classifier_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, num_labels)
        self.apply(lambda m: init_weights(m, config.initializer_range))
        _init_positions(self.albert, config)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None):
        _, pooled, _ = self.albert(input_ids, token_type_ids, attention_mask)
        logits = self.classifier(self.dropout(pooled))  # (B, num_labels)
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return loss, logits
