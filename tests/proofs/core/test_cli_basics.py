import subprocess
import sys

from attncert.proofs.cli import main


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    assert capsys.readouterr().out.startswith("attncert ")


def test_unknown_command_is_one_line_and_exit_2():
    r = subprocess.run([sys.executable, "-m", "attncert", "frobnicate"], capture_output=True, text=True)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


def test_list_runs(capsys):
    assert main(["list"]) == 0
    assert capsys.readouterr().out.strip()
