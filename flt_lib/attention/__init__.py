"""Chapter 5, attention and transformers: one module per setting.

Import the modules directly, e.g. ``from flt_lib.attention import scoring``:

- ``scoring``: dot-product scores and :func:`~flt_lib.attention.scoring.attention`, the
  book's one implementation of softmax attention, which every other module calls (5.1);
- ``positions``: sinusoidal, rotary and ALiBi positions, and the own-position task
  (5.3);
- ``multi_head``: self-, cross- and multi-head attention, with weights that copy to and
  from ``torch.nn.MultiheadAttention`` (5.2);
- ``cost``: time and memory of attention against a recurrence (5.2);
- ``block``: LayerNorm, the FFN, the transformer block, rank collapse of pure attention
  (5.4);
- ``encoder``: a small transformer encoder (or decoder-only model) with a head
  (5.3-5.7);
- ``train``: the training loop every experiment uses, returning a ``History``;
- ``seq2seq``: the encoder-decoder, teacher forcing, greedy decoding with a key-value
  cache (5.5);
- ``bert``: masked language modelling on a Markov-chain corpus, and [CLS] fine-tuning
  (5.6);
- ``vit``: patches, the vision transformer and a small CNN (5.6);
- ``circuits``: induction heads, and attention expressing convolution (5.7).
- ``gpt``, ``sampling``, ``bpe``: a decoder-only language model, its sampling rules and
  a byte-pair tokeniser (5.8); ``flash``: tiled attention and a fast path (5.9);
  ``icl``: in-context regression (5.10).
- ``seq2seq_eos``: outputs of varying length, decoding until ``<eos>`` (5.5);
  ``bert_tasks``: sentence pairs with [SEP] and segments, NSP, tagging and span heads
  (5.6).

Nothing heavy is imported here: each module loads on first use.
"""

__all__ = [
    "bert",
    "bert_tasks",
    "block",
    "bpe",
    "circuits",
    "cost",
    "encoder",
    "flash",
    "gpt",
    "icl",
    "multi_head",
    "positions",
    "sampling",
    "scoring",
    "seq2seq",
    "seq2seq_eos",
    "train",
    "vit",
]
