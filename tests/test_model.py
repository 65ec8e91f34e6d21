import pytest
import torch

from albert_rerun import AlbertForPreTraining, AlbertForSequenceClassification, ModelConfig

pytestmark = pytest.mark.usefixtures("single_thread")


def _batch(config, B=3, T=11, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, config.vocab_size, (B, T), generator=g)
    types = torch.zeros_like(ids)
    types[:, T // 2:] = 1
    mask = torch.ones_like(ids)
    mask[0, -3:] = 0
    labels = torch.full_like(ids, -100)
    labels[:, 2] = ids[:, 2]
    labels[-1, 5] = ids[-1, 5]
    return ids, types, mask, labels


def test_shapes_and_hidden_states(tiny_config):
    model = AlbertForPreTraining(tiny_config).eval()
    ids, types, mask, _ = _batch(tiny_config)
    out = model(ids, types, mask, output_hidden_states=True)
    assert out.mlm_logits.shape == (3, 11, tiny_config.vocab_size)
    assert out.sentence_logits.shape == (3, 2)
    assert len(out.hidden_states) == tiny_config.num_hidden_layers + 1


def test_masked_only_logits_equal_full_logits(tiny_config):
    """The fast path (logits at masked positions only) changes no number."""
    model = AlbertForPreTraining(tiny_config).eval()
    ids, types, mask, labels = _batch(tiny_config)
    fast = model(ids, types, mask, mlm_labels=labels)
    full = model(ids, types, mask, mlm_labels=labels, full_logits=True)
    torch.testing.assert_close(fast.mlm_loss, full.mlm_loss)
    torch.testing.assert_close(fast.mlm_logits, full.mlm_logits[labels != -100])


def test_static_layout_gives_the_loss_of_the_masked_positions(tiny_config):
    """mlm_positions (B, P) with -100 in padding slots (the training engine's layout):
    the same loss and logits as labels over (B, T)."""
    model = AlbertForPreTraining(tiny_config).eval()
    ids, types, mask, labels = _batch(tiny_config)
    P = 3
    positions = torch.zeros(len(ids), P, dtype=torch.long)
    slot_labels = torch.full((len(ids), P), -100)
    for row in range(len(ids)):
        where = (labels[row] != -100).nonzero()[:, 0]
        positions[row, :len(where)] = where
        slot_labels[row, :len(where)] = labels[row, where]
    static = model(ids, types, mask, mlm_labels=slot_labels, mlm_positions=positions)
    dynamic = model(ids, types, mask, mlm_labels=labels)
    assert static.mlm_logits.shape == (len(ids), P, tiny_config.vocab_size)
    torch.testing.assert_close(static.mlm_loss, dynamic.mlm_loss)
    torch.testing.assert_close(static.mlm_logits[slot_labels != -100], dynamic.mlm_logits)


def test_all_shared_layers_apply_the_same_block(tiny_config):
    """With one shared block, layer i+1 is the same function as layer i."""
    model = AlbertForPreTraining(tiny_config).eval()
    encoder = model.albert.encoder
    assert len(encoder.attention_blocks) == 1 and len(encoder.ffn_blocks) == 1
    ids, types, mask, _ = _batch(tiny_config)
    states = model(ids, types, mask, output_hidden_states=True).hidden_states
    block = lambda x: encoder.ffn_blocks[0](encoder.attention_blocks[0](x, mask[:, None, None, :].bool()))
    torch.testing.assert_close(block(states[2]), states[3])


def test_tied_decoder_gets_gradient_through_embeddings(tiny_config):
    model = AlbertForPreTraining(tiny_config)
    ids, types, mask, labels = _batch(tiny_config)
    model(ids, types, mask, mlm_labels=labels, sentence_labels=torch.tensor([0, 1, 0])).loss.backward()
    assert model.albert.embeddings.word_embeddings.weight.grad.abs().sum() > 0
    names = [n for n, _ in model.named_parameters()]
    assert not any("decoder" in n for n in names)  # tied: no second V x E matrix


def test_padding_does_not_change_unpadded_outputs(tiny_config):
    model = AlbertForPreTraining(tiny_config).eval()
    ids, types, mask, _ = _batch(tiny_config, B=1)
    short = model(ids[:, :8], types[:, :8]).mlm_logits
    padded_ids = ids.clone()
    padded_ids[:, 8:] = 0
    pad_mask = torch.ones_like(ids)
    pad_mask[:, 8:] = 0
    long = model(padded_ids, types, pad_mask).mlm_logits[:, :8]
    torch.testing.assert_close(short, long, atol=1e-5, rtol=1e-5)


def test_dropout_only_in_training():
    config = ModelConfig(vocab_size=50, embedding_size=8, hidden_size=16, num_hidden_layers=2,
                         num_attention_heads=2, intermediate_size=32,
                         hidden_dropout_prob=0.3, attention_probs_dropout_prob=0.3)
    model = AlbertForPreTraining(config)
    ids, types, mask, _ = _batch(config)
    model.eval()
    a, b = model(ids, types, mask).mlm_logits, model(ids, types, mask).mlm_logits
    torch.testing.assert_close(a, b)
    model.train()
    assert not torch.equal(model(ids, types, mask).mlm_logits, model(ids, types, mask).mlm_logits)


def test_sequence_classifier_learns_a_trivial_task(tiny_config):
    """A few steps fit a label that is the first token's parity: the head is wired."""
    torch.manual_seed(0)
    model = AlbertForSequenceClassification(tiny_config, num_labels=2)
    ids = torch.randint(5, tiny_config.vocab_size, (16, 6))
    ids[:, 0] = torch.tensor([5, 6] * 8)
    labels = ids[:, 0] % 2
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    first = None
    for _ in range(40):
        loss, _ = model(ids, labels=labels)
        first = first if first is not None else loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.5 * first


def test_initialization_statistics():
    config = ModelConfig(vocab_size=2000, embedding_size=64, hidden_size=128,
                         num_hidden_layers=2, num_attention_heads=2, intermediate_size=512)
    model = AlbertForPreTraining(config)
    weight = model.albert.encoder.ffn_blocks[0].ffn.weight
    assert abs(weight.std().item() - 0.02) < 0.001
    assert model.albert.encoder.ffn_blocks[0].ffn.bias.abs().sum() == 0
    assert model.albert.embeddings.word_embeddings.weight[0].abs().sum() == 0  # padding row
