"""Numerical parity with HF transformers' AlbertForPreTraining and BertForPreTraining.

Weights are copied from a randomly initialized HF model into ours; hidden states,
logits and losses must agree, and so must parameter counts.
"""
import pytest
import torch

transformers = pytest.importorskip("transformers")

from albert_rerun import AlbertForPreTraining, ModelConfig  # noqa: E402
from albert_rerun.model.convert import from_hf_albert, from_hf_bert  # noqa: E402

ATOL = RTOL = 2e-5
pytestmark = pytest.mark.usefixtures("single_thread")


def _hf_albert_config(c: ModelConfig):
    return transformers.AlbertConfig(
        vocab_size=c.vocab_size, embedding_size=c.embedding_size, hidden_size=c.hidden_size,
        num_hidden_layers=c.num_hidden_layers, num_hidden_groups=c.num_hidden_groups,
        num_attention_heads=c.num_attention_heads, intermediate_size=c.intermediate_size,
        inner_group_num=1, hidden_act=c.hidden_act, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, classifier_dropout_prob=0.0,
        max_position_embeddings=c.max_position_embeddings, type_vocab_size=c.type_vocab_size,
        layer_norm_eps=c.layer_norm_eps, pad_token_id=c.pad_token_id)


def _hf_bert_config(c: ModelConfig):
    return transformers.BertConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size,
        num_hidden_layers=c.num_hidden_layers, num_attention_heads=c.num_attention_heads,
        intermediate_size=c.intermediate_size, hidden_act=c.hidden_act,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        max_position_embeddings=c.max_position_embeddings, type_vocab_size=c.type_vocab_size,
        layer_norm_eps=c.layer_norm_eps, pad_token_id=c.pad_token_id)


def _inputs(c: ModelConfig, B=3, T=13, seed=1):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, c.vocab_size, (B, T), generator=g)
    types = (torch.arange(T) >= T // 2).long().expand(B, T).contiguous()
    mask = torch.ones(B, T, dtype=torch.long)
    mask[1, -4:] = 0  # one padded sequence
    labels = torch.full((B, T), -100)
    positions = torch.rand(B, T, generator=g) < 0.3
    positions[:, 1] = True
    labels[positions] = ids[positions]
    sentence = torch.tensor([0, 1, 1][:B])
    return ids, types, mask, labels, sentence


def _perturb(model):
    """Random LayerNorm/bias values so that a swapped tensor cannot pass unnoticed."""
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.add_(0.1 * torch.randn(p.shape, generator=g))


def _assert_parity(config, hf, convert, sentence_argument, sentence_logits_name):
    """Copy HF's weights into ours; every output and the loss must agree."""
    _perturb(hf)
    ours = AlbertForPreTraining(config).eval()
    ours.load_state_dict(convert(hf.state_dict(), config), strict=True)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())

    ids, types, mask, labels, sentence = _inputs(config)
    with torch.no_grad():
        theirs = hf(input_ids=ids, token_type_ids=types, attention_mask=mask, labels=labels,
                    output_hidden_states=True, **{sentence_argument: sentence})
        mine = ours(ids, types, mask, mlm_labels=labels, sentence_labels=sentence,
                    output_hidden_states=True, full_logits=True)
        fast = ours(ids, types, mask, mlm_labels=labels, sentence_labels=sentence)
    valid = mask.bool()
    assert len(mine.hidden_states) == len(theirs.hidden_states)
    for a, b in zip(mine.hidden_states, theirs.hidden_states):
        torch.testing.assert_close(a[valid], b[valid], atol=ATOL, rtol=RTOL)
    torch.testing.assert_close(mine.mlm_logits[valid], theirs.prediction_logits[valid],
                               atol=ATOL, rtol=RTOL)
    torch.testing.assert_close(mine.sentence_logits, getattr(theirs, sentence_logits_name),
                               atol=ATOL, rtol=RTOL)
    torch.testing.assert_close(mine.loss, theirs.loss, atol=ATOL, rtol=RTOL)
    torch.testing.assert_close(fast.loss, theirs.loss, atol=ATOL, rtol=RTOL)


ALBERT_CASES = [
    # (E, H, L, heads, I, groups, act): odd sizes, E < H, E > H, grouped sharing
    (16, 36, 6, 6, 37, 1, "gelu_new"),
    (8, 32, 4, 4, 64, 2, "gelu_new"),
    (24, 20, 6, 5, 33, 3, "gelu"),
    (32, 32, 3, 2, 48, 3, "relu"),  # E == H: HF still projects
]


@pytest.mark.parametrize("E, H, L, heads, I, groups, act", ALBERT_CASES)
def test_albert_parity(E, H, L, heads, I, groups, act):
    config = ModelConfig(vocab_size=97, embedding_size=E, hidden_size=H, num_hidden_layers=L,
                         num_attention_heads=heads, intermediate_size=I, hidden_act=act,
                         max_position_embeddings=40, sharing="all", num_hidden_groups=groups,
                         project_embeddings=True, classifier_dropout_prob=0.0)
    torch.manual_seed(0)
    hf = transformers.AlbertForPreTraining(_hf_albert_config(config)).eval()
    _assert_parity(config, hf, from_hf_albert, "sentence_order_label", "sop_logits")


BERT_CASES = [(36, 3, 6, 37, "gelu"), (32, 2, 4, 64, "gelu_new"), (20, 4, 5, 50, "gelu")]


@pytest.mark.parametrize("H, L, heads, I, act", BERT_CASES)
def test_bert_parity(H, L, heads, I, act):
    config = ModelConfig(vocab_size=101, embedding_size=H, hidden_size=H, num_hidden_layers=L,
                         num_attention_heads=heads, intermediate_size=I, hidden_act=act,
                         max_position_embeddings=40, sharing="none",
                         classifier_dropout_prob=0.0)
    assert not config.has_projection
    torch.manual_seed(0)
    hf = transformers.BertForPreTraining(_hf_bert_config(config)).eval()
    _assert_parity(config, hf, from_hf_bert, "next_sentence_label", "seq_relationship_logits")


def test_gradients_match_hf_albert():
    """One backward pass: the gradients of every shared tensor agree as well."""
    config = ModelConfig(vocab_size=61, embedding_size=12, hidden_size=24, num_hidden_layers=4,
                         num_attention_heads=3, intermediate_size=30, max_position_embeddings=32,
                         sharing="all", num_hidden_groups=2, classifier_dropout_prob=0.0)
    torch.manual_seed(0)
    hf = transformers.AlbertForPreTraining(_hf_albert_config(config)).train()
    ours = AlbertForPreTraining(config).train()
    ours.load_state_dict(from_hf_albert(hf.state_dict(), config), strict=True)
    ids, types, mask, labels, sentence = _inputs(config)
    hf(input_ids=ids, token_type_ids=types, attention_mask=mask, labels=labels,
       sentence_order_label=sentence).loss.backward()
    ours(ids, types, mask, mlm_labels=labels, sentence_labels=sentence).loss.backward()
    theirs = {k: v for k, v in hf.named_parameters()}
    mapping = from_hf_albert({k: v.grad if v.grad is not None else torch.zeros_like(v)
                              for k, v in theirs.items()}, config)
    for name, p in ours.named_parameters():
        torch.testing.assert_close(p.grad, mapping[name], atol=1e-5, rtol=1e-4, msg=name)
