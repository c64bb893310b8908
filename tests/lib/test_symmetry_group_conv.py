import math

import pytest
import torch

from flt_lib.rng import torch_generator
from flt_lib.symmetry import cnn, conv, group_conv, sets


def _f(seed=0, B=2, C=3, N=7):
    return torch.randn(
        B, C, 4, N, N, generator=torch_generator(seed), dtype=torch.float64
    )


def _psi(seed=1, O=2, C=3, k=3):
    return torch.randn(
        O, C, 4, k, k, generator=torch_generator(seed), dtype=torch.float64
    )


@pytest.mark.parametrize("k", [1, 3, 5])
def test_p4_group_conv_is_equivariant_to_rotations_and_shifts(k):
    f, psi = _f(), _psi(k=k)
    y = group_conv.p4_group_conv(f, psi)
    rot = (
        (group_conv.p4_group_conv(cnn.p4_rotate(f), psi) - cnn.p4_rotate(y)).abs().max()
    )
    shift = lambda z: torch.roll(z, (3, 1), dims=(-2, -1))
    sh = (group_conv.p4_group_conv(shift(f), psi) - shift(y)).abs().max()
    assert rot < 1e-12 and sh < 1e-12


def test_p4_group_conv_equals_the_loop_over_the_definition():
    f, psi = _f(2), _psi(3)
    out = []
    for r in range(4):
        out.append(
            sum(
                cnn.conv2d(
                    f[:, :, s],
                    torch.rot90(psi[:, :, (s - r) % 4], r, dims=(2, 3)),
                    padding=1,
                    padding_mode="circular",
                )
                for s in range(4)
            )
        )
    torch.testing.assert_close(
        group_conv.p4_group_conv(f, psi), torch.stack(out, dim=2)
    )


def test_p4_lift_with_zero_padding_equals_section_6_3():
    g = torch_generator(4)
    x = torch.randn(2, 3, 9, 9, generator=g, dtype=torch.float64)
    w = torch.randn(4, 3, 3, 3, generator=g, dtype=torch.float64)
    torch.testing.assert_close(
        group_conv.p4_lift(x, w, padding_mode="zeros"), cnn.p4_lift(x, w)
    )


def test_commutant_basis_reproduces_the_solves_of_sections_6_2_and_6_4():
    n = 5
    S = conv.shift_matrix(n)
    assert (
        group_conv.commutant_basis([(S, S)]).shape[0]
        == conv.shift_commutant_basis(n).shape[0]
        == n
    )
    # S_n on R^n: transposition and n-cycle, as in sets.equivariant_basis
    P = lambda perm: torch.eye(n, dtype=torch.float64)[list(perm)]
    gens = [P((1, 0, 2, 3, 4)), P((1, 2, 3, 4, 0))]
    B = group_conv.commutant_basis([(A, A) for A in gens])
    assert B.shape[0] == sets.equivariant_basis(n, 1, 1).shape[0] == 2
    for M in B:  # every solution commutes with every generator
        for A in gens:
            assert (A @ M - M @ A).abs().max() < 1e-12


def test_commutant_of_p4_is_spanned_by_group_convolutions_and_matches_burnside():
    N = 3
    ops = [
        lambda z: torch.roll(z, 1, dims=-1),
        lambda z: torch.roll(z, 1, dims=-2),
        lambda z: cnn.p4_rotate(z[None, None])[0, 0],
    ]
    gens = [group_conv.action_matrix(op, (4, N, N)) for op in ops]
    B = group_conv.commutant_basis([(A, A) for A in gens]).reshape(36, -1)
    G = group_conv.group_closure(gens)
    assert len(G) == 36 and group_conv.burnside_dimension(G, G) == pytest.approx(36)
    psi = _psi(5, O=1, C=1)
    M = group_conv.action_matrix(
        lambda z: group_conv.p4_group_conv(z[None, None], psi)[0, 0], (4, N, N)
    ).reshape(-1)
    assert (M - B.T @ (B @ M)).abs().max() < 1e-12


def test_canonicalize_is_invariant_and_p4cnn_is_invariant():
    X, _ = group_conv.chiral_motif_images(
        20, 6, noise=0.3, generator=torch_generator(0)
    )
    w = torch.tensor([[1.0, 1, 0], [1, 0, 0], [0, 0, 0]])[None, None]
    R = lambda z: torch.rot90(z, 1, dims=(2, 3))
    assert torch.equal(
        group_conv.canonicalize_p4(R(X), w), group_conv.canonicalize_p4(X, w)
    )
    net = group_conv.P4CNN(3, 2, generator=torch_generator(1)).double()
    Xd = X.double()
    shift = lambda z: torch.roll(z, (1, 2), dims=(2, 3))
    assert (net(R(Xd)) - net(Xd)).abs().max() < 1e-12
    assert (net(shift(Xd)) - net(Xd)).abs().max() < 1e-12


def test_chiral_motifs_are_not_related_by_rotation():
    L = group_conv._L_MOTIF
    assert all(not torch.equal(torch.rot90(L, r), L.flip(1)) for r in range(4))


def test_bad_inputs():
    with pytest.raises(ValueError, match="rotation axis of length 4"):
        group_conv.p4_group_conv(torch.zeros(1, 1, 3, 5, 5), torch.zeros(1, 1, 4, 3, 3))
    with pytest.raises(ValueError, match="odd square kernels"):
        group_conv.p4_group_conv(torch.zeros(1, 1, 4, 5, 5), torch.zeros(1, 1, 4, 2, 2))
    with pytest.raises(ValueError, match="input channels"):
        group_conv.p4_group_conv(torch.zeros(1, 2, 4, 5, 5), torch.zeros(1, 1, 4, 3, 3))
    with pytest.raises(ValueError, match="padding_mode"):
        group_conv.p4_lift(
            torch.zeros(1, 1, 5, 5), torch.zeros(1, 1, 3, 3), padding_mode="reflect"
        )
    with pytest.raises(TypeError, match="pairs"):
        group_conv.commutant_basis([])
    with pytest.raises(ValueError, match=r"pairs\[1\]\[0\] must have shape"):
        group_conv.commutant_basis(
            [(torch.eye(2), torch.eye(2)), (torch.eye(3), torch.eye(2))]
        )
    with pytest.raises(ValueError, match="max_size"):
        group_conv.group_closure([torch.tensor([[2.0]])], max_size=10)
    with pytest.raises(ValueError, match="same group elements"):
        group_conv.burnside_dimension([torch.eye(2)], [])
    with pytest.raises(TypeError, match="op must be callable"):
        group_conv.action_matrix(3, (2,))
    with pytest.raises(ValueError, match=r"w must have shape \(1, 1, k, k\)"):
        group_conv.canonicalize_p4(torch.zeros(1, 1, 5, 5), torch.zeros(2, 1, 3, 3))
    with pytest.raises(ValueError, match="size"):
        group_conv.chiral_motif_images(3, 2, noise=0.1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="k must be odd"):
        group_conv.P4CNN(2, 2, generator=torch_generator(0), k=2)
