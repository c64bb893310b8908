import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.attention import bpe

CORPUS = ["abcabcab", "ccabab", "abababab", "bcbcbca"]


def test_merges_and_vocabulary_on_a_small_corpus():
    b = bpe.learn_bpe(CORPUS, 3)
    assert b.merges[0] == ("a", "b")          # the most frequent pair
    assert b.vocab[:3] == ("a", "b", "c") and len(b.vocab) == 3 + len(b.merges)


def test_a_merge_shortens_by_the_non_overlapping_count():
    assert bpe.merge_pair(list("aaaa"), ("a", "a")) == ["aa", "aa"]
    assert bpe.merge_pair(list("aaa"), ("a", "a")) == ["aa", "a"]
    assert bpe.merge_pair(list("abcab"), ("a", "b")) == ["ab", "c", "ab"]


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="abc", max_size=30))
def test_round_trip(text):
    b = bpe.learn_bpe(CORPUS, 6)
    assert b.decode(b.encode(text)) == text


def test_bad_input_names_the_argument():
    b = bpe.learn_bpe(CORPUS, 2)
    with pytest.raises(ValueError, match="outside the alphabet"):
        b.encode("abz")
    with pytest.raises(TypeError, match="text must be a str"):
        b.encode(["a"])
    with pytest.raises(ValueError, match="ids must be ints"):
        b.decode([0, 99])
    with pytest.raises(TypeError, match="corpus must be a sequence of strings"):
        bpe.learn_bpe("abc", 2)
    with pytest.raises(ValueError, match="n_merges must be an int >= 0"):
        bpe.learn_bpe(CORPUS, -1)
