"""Size limits: each refusal states the computed size, the limit and the option that raises it,
the memory a run would need is predicted and refused up front, and every limit can be raised."""

from pathlib import Path

import pytest

from attncert.constructions import rasp
from attncert.constructions.simulator import universal
from attncert.exact import QQ
from attncert.exact.errors import LimitExceeded
from attncert.exact.limits import Limits, limits
from attncert.constructions.rasp.evaluate import held_values
from attncert.proofs.core import memory
from attncert.proofs.cli import main
from attncert.proofs.core.cost import refuse_over_limits
from attncert.proofs.core.registry import load_claims

# U(182, 1, 1) needs 182^2 = 33,124 positions, just over the default limit of 32,768.
OVER = {"n": 182, "d": 1, "dv": 1}


def test_a_sequence_over_the_limit_is_refused_with_its_length_the_limit_and_the_option():
    with pytest.raises(LimitExceeded) as e:
        refuse_over_limits(load_claims()["universal"], OVER, Limits())
    msg = str(e.value)
    assert "33,124 positions" in msg and "32,768" in msg and "--max-positions" in msg


def test_the_position_limit_can_be_raised(tmp_path: Path, capsys):
    out = tmp_path / "u.json"
    assert main(["prove", "universal", "--n", "182", "--d", "1", "--dv", "1", "--out", str(out)]) == 2
    assert "--max-positions" in capsys.readouterr().err
    args = ["prove", "universal", "--n", "182", "--d", "1", "--dv", "1", "--max-positions", "40000", "--out", str(out)]
    assert main(args) == 0 and out.exists()


def test_the_evaluator_names_the_length_the_limit_and_the_option():
    prog = rasp.numerical(rasp.Map(rasp.fn("mul_const", c=2), rasp.tokens))
    with limits(Limits(max_positions=3)), pytest.raises(rasp.EvaluationError, match=r"length 4, over the limit of 3 positions \(raise it with --max-positions\)"):
        rasp.evaluate(prog, [1, 2, 3, 4], QQ)
    with limits(Limits(max_positions=4)):
        assert rasp.evaluate(prog, [1, 2, 3, 4], QQ) == [2, 4, 6, 8]


def test_a_selection_names_its_pairs_the_limit_and_the_option():
    every = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE), rasp.numerical(rasp.tokens), default=0))
    with limits(Limits(max_pairs=8)), pytest.raises(rasp.EvaluationError, match=r"9 pairs, over the limit of 8 \(raise it with --max-pairs\)"):
        rasp.evaluate(every, [1, 2, 3], QQ)
    with limits(Limits(max_pairs=9)):
        assert rasp.evaluate(every, [1, 2, 3], QQ) == [2, 2, 2]


def test_held_values_follow_the_schedule():
    # tokens -> f -> g: at most two sequences at once (f's argument is freed once f has run).
    chain = rasp.numerical(rasp.Map(rasp.fn("add_const", c=1), rasp.numerical(rasp.Map(rasp.fn("mul_const", c=2), rasp.tokens))))
    assert held_values(rasp.to_graph(chain)) == 2
    # indices and Select(indices, indices) are static, held throughout; tokens and the mean are data.
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), rasp.numerical(rasp.tokens), default=0))
    assert held_values(rasp.to_graph(mean)) == 4


def test_the_memory_of_u_is_predicted_from_its_length_and_schedule():
    claim = load_claims()["universal"]
    for n in (8, 16):
        cost = claim.estimate({"n": n, "d": 4, "dv": 3})
        held = held_values(universal(n, 4, 3).graph())
        # M_0 + N (b w + r), with r the bytes of an EE entry of the certificate per position.
        assert cost.memory == memory.BASE_BYTES + cost.positions * (memory.BYTES_PER_HELD * held + memory.RECORDED["EE"])
        assert cost.positions == n * n * 4


def test_a_run_predicted_to_need_more_memory_than_the_machine_has_is_refused_up_front(tmp_path: Path, capsys):
    claim = load_claims()["universal"]
    need = claim.estimate({"n": 4, "d": 3, "dv": 2}).memory
    with pytest.raises(LimitExceeded) as e:
        refuse_over_limits(claim, {"n": 4, "d": 3, "dv": 2}, Limits(max_memory=need - 1))
    msg = str(e.value)
    assert f"about {need:,} bytes of memory" in msg and f"{need - 1:,}" in msg and "--max-memory" in msg
    refuse_over_limits(claim, {"n": 4, "d": 3, "dv": 2}, Limits(max_memory=need))
    out = tmp_path / "u.json"
    assert main(["prove", "universal", "--max-memory", "1000000", "--out", str(out)]) == 2  # a small fake machine
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "bytes of memory" in err and "--max-memory" in err and not out.exists()
    assert main(["prove", "universal", "--max-memory", str(need), "--out", str(out)]) == 0


def test_the_default_memory_limit_is_what_the_machine_has():
    assert 0 < Limits().max_memory <= 1 << 50
