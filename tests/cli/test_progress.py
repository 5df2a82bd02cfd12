"""Long runs are not silent: a progress bar on stderr when it is a terminal, nothing otherwise;
verify shows the bars of the claim it proves again."""

from __future__ import annotations

import io

import pytest

from attncert.exact.certificate import write_certificate
from attncert.proofs.core import progress
from attncert.proofs.cli import main
from attncert.proofs.simulator.languages import prove_parity


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """stderr is a terminal, bars appear at once, and the environment allows them.

    Returns a function that installs the terminal: inside the test, since pytest's output
    capture sets sys.stderr again after the fixtures are set up.
    """
    err = Terminal()
    monkeypatch.setattr(progress, "DELAY", 0)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("ATTNCERT_NO_PROGRESS", raising=False)

    def install() -> Terminal:
        monkeypatch.setattr("sys.stderr", err)
        return err

    return install


def shown(total: int = 3) -> bool:
    with progress.bar(total, "steps", desc="work") as bar:
        bar.update(total)
        return not isinstance(bar, progress._NoBar)


def test_a_bar_on_a_terminal_and_none_elsewhere(terminal, monkeypatch):
    err = terminal()
    assert shown() and "work" in err.getvalue() and "steps" in err.getvalue()
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert not shown()


@pytest.mark.parametrize("name, value", [("CI", "true"), ("CI", "1"), ("ATTNCERT_NO_PROGRESS", "1")])
def test_no_bar_in_ci_or_when_disabled_by_the_environment(terminal, monkeypatch, name, value):
    err = terminal()
    monkeypatch.setenv(name, value)
    assert not shown() and err.getvalue() == ""


def test_no_bar_when_disabled_or_inside_another_bar(terminal):
    terminal()
    with progress.disabled():
        assert not shown()
    with progress.bar(1, "outer") as outer:
        assert not isinstance(outer, progress._NoBar)
        assert not shown()  # one bar at a time
    assert shown()
    with progress.bar(2, "x", show=False) as bar:
        bar.update(1)
        bar.set_postfix_str("a")
        assert isinstance(bar, progress._NoBar)


def test_verify_of_a_language_certificate_shows_progress(tmp_path, terminal, capsys):
    err = terminal()
    path = tmp_path / "parity.json"
    write_certificate(path, prove_parity(max_k=2, max_length=5))
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out.startswith("OK ")
    bars = err.getvalue()
    assert "parity (language)" in bars and "parity:" in bars and "words" in bars


@pytest.mark.parametrize(
    "args, unit",
    [
        (["hierarchy", "--N", "2", "--D", "1", "--Dv", "1"], "cases"),
        (["match2", "--max-M", "2", "--max-length", "3"], "words"),
        (["parity", "--max-k", "2", "--max-length", "3"], "words"),
        (["sinkhorn_convergence", "--n", "3", "--eps", "1/5,1/20"], "eps"),
        (["sinkhorn_universality", "--pairs", "3", "--max-n", "3", "--widths", "1,2,3"], "couplings"),
    ],
)
def test_prove_shows_progress(tmp_path, terminal, capsys, args, unit):
    err = terminal()
    assert main(["prove", *args, "--out", str(tmp_path / "c.json")]) in (0, 1)
    assert f"{args[0]}:" in err.getvalue() and unit in err.getvalue()
    assert "Traceback" not in err.getvalue()


def test_the_compositional_tracr_proof_shows_its_lengths(tmp_path, terminal, capsys):
    pytest.importorskip("tracr")
    err = terminal()
    args = ["prove", "tracr_model", "--method", "compositional", "--program", "tracr.compiler.lib:make_length", "--vocab", "a,b", "--max-seq-len", "4"]
    assert main([*args, "--out", str(tmp_path / "c.json")]) == 0
    assert "tracr_model:" in err.getvalue() and "lengths" in err.getvalue()
    assert "Traceback" not in err.getvalue()
