import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.recurrent import elman as E
from flt_lib.recurrent import tasks as TK
from flt_lib.rng import torch_generator



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
