"""Whole-word n-gram masking in torch, vectorised over a batch, on the training device.

The same laws as the numpy reference (``masking``): whole words in n-grams of n <= 3
adjacent words (never across a special token such as [SEP]), p(n) proportional to 1/n
where n words are available, a budget of 15% of a sequence's tokens up to a cap, an
n-gram shortened until it fits the budget, no overlap, and the chosen tokens replaced
80/10/10 by [MASK] / a random piece / the original.

The numpy code walks the words of one sequence in a random order until the budget is
spent. Here every sequence of the batch walks its own random order at once: step k
looks at the k-th word of each sequence's order, for 2 x ``max_predictions`` steps (each
taken n-gram holds at least one token, so the walk ends early only where many words
overlap or do not fit; the tests measure the masking rate of both on real text). The
draws come from a ``torch.Generator`` seeded per step, so a resumed run masks as the
uninterrupted one did; they are not the numpy draws.

Output shapes are static: ``max_predictions`` positions per sequence, padded with
position 0 and label -100, the layout of the official TF code (masked_lm_positions).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .masking import NGRAM_PROBABILITIES, MaskingConfig


@dataclass
class TokenTables:
    """Per-piece lookups on the device: word starts, specials, [MASK], vocabulary size."""

    word_start: torch.Tensor  # (V,) bool
    special: torch.Tensor  # (V,) bool
    mask_id: int
    vocab_size: int

    @classmethod
    def from_tokenizer(cls, tokenizer, device) -> "TokenTables":
        return cls(torch.tensor(tokenizer.word_start, dtype=torch.bool, device=device),
                   torch.tensor(tokenizer.special, dtype=torch.bool, device=device),
                   tokenizer.mask_id, tokenizer.vocab_size)


def _ngram_cdf_table(max_ngram: int, device) -> torch.Tensor:
    """(max_ngram + 1, max_ngram): row a holds the cumulative p(n), n = 1..a, p ~ 1/n."""
    table = torch.ones(max_ngram + 1, max_ngram, dtype=torch.float64)
    for available in range(1, max_ngram + 1):
        p = torch.tensor(NGRAM_PROBABILITIES[:available], dtype=torch.float64)
        table[available, :available] = torch.cumsum(p / p.sum(), 0)
        table[available, available - 1:] = 1.0
    return table.to(device=device, dtype=torch.float32)


def words_of(ids: torch.Tensor, lengths: torch.Tensor, tables: TokenTables):
    """Whole words of each sequence: (word index per token or -1, starts, ends, count).

    ``starts``/``ends`` are (B, T) token positions [start, end) of word w in column w;
    columns beyond a sequence's ``count`` words hold T."""
    B, T = ids.shape
    position = torch.arange(T, device=ids.device).expand(B, T)
    special = tables.special[ids] | (position >= lengths[:, None])
    previous_special = torch.cat([torch.ones_like(special[:, :1]), special[:, :-1]], 1)
    begins = ~special & (tables.word_start[ids] | previous_special)
    index = torch.where(special, -1, torch.cumsum(begins.long(), 1) - 1)
    count = begins.sum(1)
    sentinel = torch.full((B, T + 1), T, dtype=torch.long, device=ids.device)
    column = torch.where(special, T, index)  # specials go to a dropped extra column
    starts = sentinel.scatter_reduce(1, column, position, "amin")[:, :T]
    ends = torch.zeros_like(sentinel).scatter_reduce(1, column, position + 1, "amax")[:, :T]
    ends = torch.where(starts == T, T, ends)
    return index, starts, ends, count


def mask_tokens(ids: torch.Tensor, lengths: torch.Tensor, tables: TokenTables,
                config: MaskingConfig, generator: torch.Generator):
    """Mask a batch: (masked ids (B, T), positions (B, P), labels (B, P), drawn n).

    ``ids`` (B, T) padded; ``lengths`` (B,) tokens before padding. ``drawn`` is n as
    drawn for words where all n <= max_ngram were possible, -1 elsewhere (B, T): the
    length law's test reads it."""
    B, T = ids.shape
    device = ids.device
    P, N = config.max_predictions, config.max_ngram
    index, starts, ends, count = words_of(ids, lengths, tables)
    rows = torch.arange(B, device=device)
    budget = torch.clamp(torch.round(lengths.double() * config.probability).long(), 1, P)

    # n-grams of adjacent words: word w + j follows w + j - 1 without a special between
    padded_starts = torch.cat([starts, torch.full((B, N), T, device=device)], 1)
    padded_ends = torch.cat([ends, torch.full((B, N), T, device=device)], 1)
    column = torch.arange(T, device=device)
    adjacent = [torch.ones(B, T, dtype=torch.bool, device=device)]
    for j in range(1, N):
        follows = padded_starts[:, j:j + T] == padded_ends[:, j - 1:j - 1 + T]
        adjacent.append(adjacent[-1] & follows & (column + j < count[:, None]))
    available = torch.stack(adjacent, 0).sum(0)  # (B, T): 1..N for real words
    span = torch.stack([padded_ends[:, j:j + T] - starts for j in range(N)], -1)  # (B, T, N)

    # every word's n, and a random order of each sequence's words
    cdf = _ngram_cdf_table(N, device)[available.clamp(min=1)]  # (B, T, N)
    u = torch.rand(B, T, 1, generator=generator, device=device)
    drawn = 1 + (u > cdf).sum(-1).clamp(max=N - 1)
    keys = torch.rand(B, T, generator=generator, device=device)
    keys = torch.where(column < count[:, None], keys, 2.0)
    order = torch.argsort(keys, 1)

    covered = torch.zeros(B, T + N, dtype=torch.bool, device=device)  # by word
    chosen = torch.zeros(B, dtype=torch.long, device=device)
    for k in range(2 * P):
        w = order[:, k]
        valid = k < count
        n = drawn[rows, w]
        lengths_n = span[rows, w]  # (B, N): tokens of the 1-, 2-, ... N-gram at w
        room = (budget - chosen)[:, None]
        fits = (lengths_n <= room) & (torch.arange(1, N + 1, device=device) <= n[:, None])
        n_fit = fits.long().sum(1)  # the shortening rule: the longest that fits, <= n
        words = w[:, None] + torch.arange(N, device=device)  # (B, N)
        inside = torch.arange(N, device=device) < n_fit[:, None]
        overlap = (covered.gather(1, words) & inside).any(1)
        take = valid & (n_fit > 0) & ~overlap
        covered.scatter_(1, words, covered.gather(1, words) | (inside & take[:, None]))
        chosen = chosen + torch.where(
            take, lengths_n.gather(1, (n_fit - 1).clamp(min=0)[:, None])[:, 0], 0)
    token_covered = (index >= 0) & covered.gather(1, index.clamp(min=0))

    # static layout: the covered positions first (in order), then padding
    position_keys = torch.where(token_covered, column, T + column)
    positions = torch.sort(position_keys, 1).values[:, :P]
    real = positions < T
    positions = torch.where(real, positions, 0)
    labels = torch.where(real, ids.gather(1, positions), -100)

    r = torch.rand(B, T, generator=generator, device=device)
    to_mask = token_covered & (r < config.mask_fraction)
    to_random = token_covered & (r >= config.mask_fraction) & (
        r < config.mask_fraction + config.random_fraction)
    random_ids = torch.randint(5, tables.vocab_size, (B, T), generator=generator,
                               device=device)
    masked = torch.where(to_mask, tables.mask_id, torch.where(to_random, random_ids, ids))
    drawn_full = torch.where((available == N) & (column < count[:, None]), drawn, -1)
    return masked, positions, labels, drawn_full
