import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.recurrent import elman as E
from flt_lib.recurrent import tasks as TK
from flt_lib.rng import torch_generator


def test_pattern_classification_matches_a_string_search():
    data = TK.pattern_classification(200, min_length=1, max_length=9, vocab=3, pattern=(0, 1),
                                     generator=torch_generator(0))
    assert len(data) == 200 and {len(x) for x, _ in data} <= set(range(1, 10))
    for x, y in data:                     # brute force: search "ab" in the string of letters
        assert y == int("ab" in "".join("abc"[t] for t in x.tolist()))
    assert 0 < sum(y for _, y in data) < 200, "both labels should occur"
    again = TK.pattern_classification(200, min_length=1, max_length=9, vocab=3,
                                      generator=torch_generator(0))
    assert all(torch.equal(a[0], b[0]) and a[1] == b[1] for a, b in zip(data, again))


def test_run_length_transduction_decodes_to_the_input():
    data = TK.run_length_transduction(100, min_length=1, max_length=12, vocab=3,
                                      generator=torch_generator(1))
    for x, y in data:
        symbols, counts = y[0::2], y[1::2]
        assert torch.equal(torch.repeat_interleave(symbols, counts), x)
        assert (counts >= 1).all() and (symbols[1:] != symbols[:-1]).all()  # maximal runs
    assert any(len(y) != len(x) for x, y in data)
    x, y = TK.run_length_transduction(1, min_length=6, max_length=6, vocab=2,
                                      generator=torch_generator(2))[0]
    assert len(y) == 2 * (1 + int((x[1:] != x[:-1]).sum()))


def test_toy_task_bad_inputs():
    g = torch_generator(0)
    with pytest.raises(ValueError, match="max_length must be >= 5, got 3"):
        TK.pattern_classification(4, min_length=5, max_length=3, vocab=3, generator=g)
    with pytest.raises(ValueError, match=r"pattern\[1\] must be <= 2, got 7"):
        TK.pattern_classification(4, min_length=1, max_length=3, vocab=3, pattern=(0, 7),
                                  generator=g)
    with pytest.raises(TypeError, match="pattern must be a non-empty sequence of ints"):
        TK.pattern_classification(4, min_length=1, max_length=3, vocab=3, pattern="ab",
                                  generator=g)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        TK.run_length_transduction(4, min_length=1, max_length=3, vocab=3, generator=0)
    with pytest.raises(ValueError, match="vocab must be >= 2, got 1"):
        TK.run_length_transduction(4, min_length=1, max_length=3, vocab=1, generator=g)
    with pytest.raises(ValueError, match="n must be >= 1, got 0"):
        TK.run_length_transduction(0, min_length=1, max_length=3, vocab=3, generator=g)


def test_tag_examples():
    assert TK.iob2_tags(6, [(0, 1, "PER"), (4, 6, "LOC")]) == ["B-PER", "O", "O", "O", "B-LOC", "I-LOC"]
    assert TK.iobes_tags(5, [(0, 1, "PER"), (2, 5, "LOC")]) == ["S-PER", "O", "B-LOC", "I-LOC", "E-LOC"]
    # two adjacent entities of one type stay distinct in both schemes
    assert TK.spans_from_tags(TK.iob2_tags(4, [(0, 2, "X"), (2, 4, "X")])) == [(0, 2, "X"), (2, 4, "X")]


@st.composite
def _spans(draw):
    n = draw(st.integers(0, 12))
    cuts = sorted(draw(st.sets(st.integers(0, n), max_size=8)))
    spans = []
    for s, e in zip(cuts[::2], cuts[1::2]):
        if s < e:
            spans.append((s, e, draw(st.sampled_from(["PER", "LOC", "ORG"]))))
    return n, spans


@settings(max_examples=60, deadline=None)
@given(_spans())
def test_tags_round_trip(case):
    n, spans = case
    assert TK.spans_from_tags(TK.iob2_tags(n, spans)) == spans
    assert TK.spans_from_tags(TK.iobes_tags(n, spans)) == spans


def test_mixing_strategies():
    g = torch_generator(0)
    X = torch.randn(2, 5, 3, generator=g)
    for strategy, shape in [("features", (4, 15)), ("tokens", (4, 3)), ("transpose", (4, 5))]:
        assert TK.mixing_weight_shape(strategy, 5, 3, 4) == shape
    Wf = torch.randn(4, 15, generator=g)
    torch.testing.assert_close(TK.mlp_mix(X, Wf, "features"), torch.einsum("mtp,btp->bm", Wf.reshape(4, 5, 3), X))
    Wt = torch.randn(4, 3, generator=g)
    torch.testing.assert_close(TK.mlp_mix(X, Wt, "tokens"), torch.einsum("mp,btp->btm", Wt, X))
    Wx = torch.randn(4, 5, generator=g)
    torch.testing.assert_close(TK.mlp_mix(X, Wx, "transpose"), torch.einsum("mt,btp->bpm", Wx, X))
    with pytest.raises(ValueError, match=r"W must have shape \(4, 15\) for strategy 'features' and T = 5"):
        TK.mlp_mix(torch.randn(2, 5, 3), torch.randn(4, 12), "features")


def test_jacobian_support_uni_and_bidirectional():
    g = torch_generator(1)
    fwd, bwd = E.elman_init(2, 3, generator=g), E.elman_init(2, 3, generator=g)
    x = torch.randn(6, 2, generator=g, dtype=torch.float64)
    uni = TK.jacobian_support(lambda s: E.elman(s[None], fwd)[0], x)
    bi = TK.jacobian_support(lambda s: E.bidirectional(s[None], fwd, bwd)[0], x)
    assert torch.equal(uni, torch.ones(6, 6, dtype=torch.bool).tril())
    assert bi.all()


def test_bad_inputs():
    with pytest.raises(ValueError, match="spans must be disjoint"):
        TK.iob2_tags(5, [(0, 3, "A"), (2, 4, "B")])
    with pytest.raises(TypeError, match=r"spans\[0\] must be a \(start, end, type\) tuple"):
        TK.iobes_tags(5, [(0, 3)])
    with pytest.raises(ValueError, match="continues no open 'PER' span"):
        TK.spans_from_tags(["O", "I-PER"])
    with pytest.raises(ValueError, match=r"tags\[0\] must be 'O' or one of"):
        TK.spans_from_tags(["X-PER"])
    with pytest.raises(ValueError, match="strategy must be one of"):
        TK.mixing_weight_shape("rows", 2, 2, 2)
    with pytest.raises(ValueError, match="x must be a 2-D tensor"):
        TK.jacobian_support(lambda s: s, torch.ones(2, 3, 4))
    with pytest.raises(ValueError, match="X must be a 3-D tensor"):
        TK.mlp_mix(torch.ones(5, 3), torch.ones(4, 3), "tokens")
