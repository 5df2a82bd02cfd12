"""Command-line conventions: did-you-mean, -V, no silent abbreviations, verify - and verify DIR,
--help that reads the same on every call."""

import subprocess
import sys

import pytest


def attncert(*args: str, stdin: bytes | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert", *args], input=stdin, capture_output=True, cwd=cwd, timeout=120)


@pytest.mark.parametrize(
    "args, meant",
    [
        (["provee"], "did you mean prove"),
        (["prove", "univeral"], "did you mean universal"),
        (["prove", "universal", "--sed", "3"], "did you mean --seed"),
        (["verify", "--max-byte", "3", "x.json"], "did you mean --max-bytes"),
        (["sweep", "transpose", "--seed", "3"], "did you mean --seeds"),
    ],
)
def test_a_misspelling_is_one_line_naming_the_nearest(args, meant):
    r = attncert(*args)
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and meant in err, err


def test_an_abbreviated_option_is_refused_not_guessed():
    r = attncert("prove", "transpose", "--see", "3", "--out", "-")
    assert r.returncode == 2 and b"unrecognized arguments: --see" in r.stderr and not r.stdout


def test_dash_capital_v_prints_the_version():
    a, b = attncert("-V"), attncert("--version")
    assert a.returncode == 0 and a.stdout.startswith(b"attncert ") and a.stdout == b.stdout


def test_help_is_the_same_on_every_call():
    first, second = attncert("verify", "--help"), attncert("verify", "--help")
    assert first.returncode == 0 and first.stdout == second.stdout
    assert b"available memory" in first.stdout


def test_verify_reads_standard_input_and_folders(tmp_path):
    (tmp_path / "sub").mkdir()
    assert attncert("prove", "transpose", "--out", "sub/t.json", cwd=tmp_path).returncode == 0
    assert attncert("prove", "relu", "--out", "r.json", cwd=tmp_path).returncode == 0
    r = attncert("verify", "-", stdin=(tmp_path / "r.json").read_bytes())
    assert r.returncode == 0 and r.stdout.startswith(b"OK            -  relu") and len(r.stdout.splitlines()) == 1  # one file: no tally
    r = attncert("verify", ".", cwd=tmp_path)
    lines = r.stdout.decode().splitlines()
    assert r.returncode == 0 and [line.split()[:2] for line in lines[:-1]] == [["OK", "r.json"], ["OK", "sub/t.json"]]
    assert lines[-1] == "2 certificates: 2 genuine and holding (OK), 0 genuine and not holding (DOES-NOT-HOLD), 0 genuine and not proven (NOT-PROVEN), 0 rejected (REJECTED), 0 malformed (BAD)"
    # below a folder, JSON that is not a certificate (a compiled model, an object with no certificate member) is
    # skipped and named; a file that looks like a certificate, or is not JSON, is verified (and BAD)
    assert attncert("compile", "relu", "--sizes", "n=2", "--out", "sub/relu-model.json", cwd=tmp_path).returncode == 0
    (tmp_path / "sub" / "settings.json").write_text('{"jobs": 2}')
    (tmp_path / "sub" / "truncated.json").write_bytes((tmp_path / "r.json").read_bytes()[:50])
    r = attncert("verify", ".", cwd=tmp_path)
    lines = r.stdout.decode().splitlines()
    assert r.returncode == 2, r.stdout
    assert [line.split()[:2] for line in lines[:-1]] == [["OK", "r.json"], ["SKIPPED", "sub/relu-model.json:"], ["SKIPPED", "sub/settings.json:"], ["OK", "sub/t.json"], ["BAD", "sub/truncated.json:"]]
    assert "a compiled model (format attncert-model/" in lines[1] and 'no "format" member' in lines[2]
    assert lines[-1].endswith("1 malformed (BAD); 2 files skipped, not a certificate") and lines[-1].startswith("3 certificates: 2 genuine and holding")
    r = attncert("verify", "sub/settings.json", cwd=tmp_path)  # a file named on the command line is always verified
    assert r.returncode == 2 and r.stdout.startswith(b"BAD ")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "x.json").write_text("[]")
    r = attncert("verify", "models", cwd=tmp_path)
    assert r.returncode == 2 and b"no certificate to verify" in r.stderr and r.stdout.startswith(b"SKIPPED       models/x.json: not an attncert certificate (a JSON list)")
    r = attncert("verify", "-", stdin=(tmp_path / "r.json").read_bytes()[:50])
    assert r.returncode == 2 and r.stdout.startswith(b"BAD           -")
    (tmp_path / "empty").mkdir()
    r = attncert("verify", "empty", cwd=tmp_path)
    assert r.returncode == 2 and b"no .json file below" in r.stderr
