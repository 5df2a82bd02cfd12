"""tracr programs of the tests and of the docs: functions of no arguments, as --program MODULE:FUNCTION takes.

Each imports tracr when called (the tracr extra), never when this module is imported."""

from __future__ import annotations

from typing import Any


def _rasp() -> Any:
    from tracr.rasp import rasp

    return rasp


def make_length() -> Any:
    """tracr's own make_length (lib.py): the length at every position."""
    from tracr.compiler import lib

    return lib.make_length()


def shift_none() -> Any:
    """tracr issue #25: a categorical Aggregate with default None. Position 0 selects no key, so RASP
    gives None there; the compiled model's output columns are all near 0 and argmax decodes a token."""
    rasp = _rasp()
    previous = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1)
    return rasp.categorical(rasp.Aggregate(previous, rasp.tokens, default=None))


def width_categorical() -> Any:
    """SelectorWidth of tokens == tokens, categorical: the count of equal tokens at each position."""
    rasp = _rasp()
    return rasp.categorical(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)))


def width_numerical() -> Any:
    """The same SelectorWidth, numerical."""
    rasp = _rasp()
    return rasp.numerical(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)))


def frac_prevs() -> Any:
    """tracr's make_frac_prevs of tokens == "x": the fraction of x among the tokens so far (numerical)."""
    from tracr.compiler import lib

    rasp = _rasp()
    return lib.make_frac_prevs(rasp.numerical(rasp.Map(lambda t: t == "x", rasp.tokens)))


def sort_unique() -> Any:
    """tracr's make_sort_unique(tokens, tokens): the tokens sorted (distinct tokens; repeated ones collide)."""
    from tracr.compiler import lib

    rasp = _rasp()
    return lib.make_sort_unique(rasp.tokens, rasp.tokens)


def _lib() -> Any:
    from tracr.compiler import lib

    return lib


def reverse() -> Any:
    """tracr's make_reverse(tokens)."""
    return _lib().make_reverse(_rasp().tokens)


def hist() -> Any:
    """tracr's make_hist(): how often each token occurs."""
    return _lib().make_hist()


def sort() -> Any:
    """tracr's make_sort(tokens, tokens, max_seq_len=5, min_key=1): keys made unique by their position."""
    rasp = _rasp()
    return _lib().make_sort(rasp.tokens, rasp.tokens, max_seq_len=5, min_key=1)


def count_less_freq() -> Any:
    """tracr's make_count_less_freq(2)."""
    return _lib().make_count_less_freq(2)


def pair_balance() -> Any:
    """tracr's make_pair_balance(tokens, "(", ")"): the fraction of ( minus that of ) so far (numerical means)."""
    return _lib().make_pair_balance(_rasp().tokens, "(", ")")


def sort_freq() -> Any:
    """tracr's make_sort_freq(5): the tokens by descending frequency."""
    return _lib().make_sort_freq(5)


def shuffle_dyck() -> Any:
    """tracr's make_shuffle_dyck(["()"]): whether the parentheses balance."""
    return _lib().make_shuffle_dyck(["()"])


# Issue 30: None in keys and queries. RASP calls a callable predicate on None (a map passes None through
# without a call; a predicate does not), so a head must select a key holding None where the predicate does.


def _shifted() -> Any:
    """The tokens shifted one place right: None at position 0 (a categorical Aggregate with default None)."""
    rasp = _rasp()
    previous = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1)
    return rasp.categorical(rasp.Aggregate(previous, rasp.tokens, default=None))


def _none_where_a() -> Any:
    """None wherever the token is "a", the token elsewhere."""
    rasp = _rasp()
    return rasp.categorical(rasp.Map(lambda t: None if t == "a" else t, rasp.tokens))


def width_of_none_keys() -> Any:
    """SelectorWidth(Select(shifted, tokens, k is None)): 1 at every position (the key at position 0 holds None)."""
    rasp = _rasp()
    return rasp.numerical(rasp.SelectorWidth(rasp.Select(_shifted(), rasp.tokens, lambda k, q: k is None)))


def width_of_everything() -> Any:
    """SelectorWidth(Select(none_where_a, tokens, lambda: True)): the length, keys holding None included."""
    rasp = _rasp()
    return rasp.numerical(rasp.SelectorWidth(rasp.Select(_none_where_a(), rasp.tokens, lambda k, q: True)))


def mean_over_everything() -> Any:
    """The fraction of b among all tokens, selected by lambda: True over keys that hold None where the token is a."""
    rasp = _rasp()
    is_b = rasp.numerical(rasp.Map(lambda t: 1 if t == "b" else 0, rasp.tokens))
    return rasp.numerical(rasp.Aggregate(rasp.Select(_none_where_a(), rasp.tokens, lambda k, q: True), is_b, default=0))


def width_of_keys_not_none() -> Any:
    """SelectorWidth(Select(none_where_a, tokens, k is not None)): how many tokens are not a. The predicate is
    called on None and is false there, so the compiled head, which never selects a key holding None, is right."""
    rasp = _rasp()
    return rasp.numerical(rasp.SelectorWidth(rasp.Select(_none_where_a(), rasp.tokens, lambda k, q: k is not None)))


def width_comparing_none() -> Any:
    """SelectorWidth(Select(shifted, tokens, EQ)): RASP's evaluation raises at every input (position 0's key is
    None, and a Comparison raises on None), so no input is in the program's domain."""
    rasp = _rasp()
    return rasp.numerical(rasp.SelectorWidth(rasp.Select(_shifted(), rasp.tokens, rasp.Comparison.EQ)))


def my_length() -> Any:
    """tracr's make_length, named by the user: the name is kept in every report."""
    return _lib().make_length().named("my_length")


def not_a_program() -> Any:
    """Something that is not a SOp."""
    return 42


def unsupported() -> Any:
    """A numerical Aggregate whose output is categorical: tracr refuses it, with its reason on a second line."""
    rasp = _rasp()
    return rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), rasp.tokens, default=0))


def parity_of_tokens() -> Any:
    """x % 2 on integer tokens, as a tracr user writes it for tracr's Python ints."""
    rasp = _rasp()
    return rasp.categorical(rasp.Map(lambda x: x % 2, rasp.tokens)).named("parity")


def above_half() -> Any:
    """x / 4 > 0.5: a quotient that stays exact, then a comparison with a float."""
    rasp = _rasp()
    quarter = rasp.numerical(rasp.Map(lambda x: x / 4, rasp.tokens))
    return rasp.categorical(rasp.Map(lambda x: x > 0.5, quarter)).named("above_half")


def raising_on_a_value_set() -> Any:
    """1 / (x - 2): it raises on the token 2, which every input containing 2 presents."""
    rasp = _rasp()
    return rasp.numerical(rasp.Map(lambda x: 1 / (x - 2), rasp.tokens)).named("inverse")
