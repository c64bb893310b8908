"""Chapter 4: recurrent networks and modern sequence models (one module per
setting).

Import the modules directly, e.g. ``from flt_lib.recurrent import elman``:

- ``tasks``: IOB2/IOBES span tags, MLP mixing strategies, Jacobian support (Section
  4.1);
- ``hmm_crf``: HMM and linear-chain CRF scores, the forward and Viterbi recursions
  (4.1);
- ``elman``: the Elman RNN, bidirectional and stacked, and torch.nn.RNN's weights
  (4.1, 4.2);
- ``bptt``: hand-written BPTT, truncation, step Jacobians, clipping, the cliff model
  (4.2);
- ``gated``: LSTM and GRU cells, the adding problem and its training loop (4.3);
- ``linear``: diagonal linear recurrences, parallel scans, the LRU, Mamba's gating
  theorem (4.4);
- ``seq2seq``: encoder-decoder GRUs with and without additive attention (4.5);
- ``modern``: retention, RWKV's WKV, SSM convolutions, linear attention (4.6);
- ``selective``: selective copying with selective and time-invariant SSM layers (4.6);
- ``convolution_tree``: gated convolutional language models and recursive networks
  over trees (4.7);
- ``language_model``: a grammar with an exact entropy rate, n-gram and LSTM language
  models (4.8);
- ``decoding``: sampling with temperature, greedy and beam search until an end token
  (4.8);
- ``tagger``: a BiLSTM-CRF tagger trained on the HMM of 4.1 (4.8);
- ``recall``: multi-query associative recall with softmax and linear attention (4.9);
- ``hippo``: the HiPPO-LegS matrices and the Legendre memory they implement (4.9).

Nothing is imported eagerly.
"""

__all__ = [
    "bptt",
    "convolution_tree",
    "decoding",
    "elman",
    "gated",
    "hippo",
    "hmm_crf",
    "language_model",
    "linear",
    "modern",
    "recall",
    "selective",
    "seq2seq",
    "tagger",
    "tasks",
]
