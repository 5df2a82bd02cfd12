"""EE shortcuts against the plain operations they replace (same terms, same normal form).

* a numerator over a denominator's monic form reuses the form's exponents: the same sum
  as scaling and shifting it;
* scaling by a rational is scale_shift with no shift;
* a rational is written to JSON as the EENumber it stands for.
"""

from flint import fmpq
from hypothesis import given
from hypothesis import strategies as st

from attncert.exact import EE
from attncert.exact.eenumber import EENumber
from attncert.exact.expsum import ExpSum
from attncert.exact.testing import exp_sums, nonzero_rationals, rationals


@given(exp_sums(4).filter(lambda s: not s.is_zero()), exp_sums(4), st.data())
def test_a_numerator_over_the_monic_form_is_scaled_and_shifted(den, num, data):
    # Half the time the numerator takes its exponents from the denominator, as an attention row's do.
    if data.draw(st.booleans()) and not den.is_zero():
        num = ExpSum.from_pairs((q, data.draw(nonzero_rationals())) for q in den.terms)
    q, c, m = den.monic()
    want = num.scale_shift(1 / c, -q)
    got = den.over_monic(num)
    assert got.terms == want.terms
    assert den.over_monic(num).terms == want.terms  # the second time from the kept shifts


@given(exp_sums(4), nonzero_rationals())
def test_scaled_is_scale_shift_without_a_shift(s, c):
    assert s.scaled(c).terms == s.scale_shift(c, fmpq(0)).terms
    assert s.scaled(int(c.p)).terms == s.scale_shift(fmpq(c.p), fmpq(0)).terms


@given(rationals())
def test_a_rational_is_written_as_its_eenumber(r):
    assert EE.to_json(r) == EE.to_json(EENumber.rational(r))
    assert EE.from_json(EE.to_json(r)) == r
