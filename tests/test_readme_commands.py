"""The README's command lines: the example program they run ships (examples/prog.rasp) and they work;
no two of them write the same file; it says what --png needs."""

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.pictures import assert_picture

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
#: Every command line of the README's sh blocks, without its comment.
COMMANDS = [shlex.split(line, comments=True) for block in re.findall(r"```sh\n(.*?)```", README, re.S) for line in block.splitlines() if line.startswith("attncert ")]


def attncert(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_the_readme_commands_on_the_example_program_work(tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    using = [c[1:] for c in COMMANDS if "examples/prog.rasp" in c]
    assert [a[:2] for a in using] == [["compile", "--file"], ["prove", "compiled"], ["rasp", "examples/prog.rasp"], ["prove", "rasp_program"], ["plot", "rasp_program"]]
    for args in using:
        r = attncert(args, tmp_path)
        assert r.returncode == 0, (args, r.stderr)
    run = next(a for a in using if a[0] == "rasp")
    assert json.loads(attncert(run, tmp_path).stdout) == list(reversed("hello"))  # --eval reverse --input hello
    r = attncert(["verify", "certificates/rasp_program.json"], tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("OK "), r.stdout + r.stderr
    assert json.loads((tmp_path / "models" / "reverse.json").read_text())["outputs"]  # compile --file wrote the model
    r = attncert(["verify", "r.json"], tmp_path)  # prove compiled --file: every input over a, b, c of length 5
    assert r.returncode == 0 and r.stdout.startswith("OK ") and json.loads((tmp_path / "r.json").read_text())["result"]["inputs"] == 3**5
    plot = next(a for a in using if a[0] == "plot")
    assert_picture(tmp_path / plot[plot.index("--out") + 1], 250, 250)  # reverse's one selection pattern


def written(args: list[str]) -> list[str]:
    """The files a command line writes: its --out and --png, or the verb's default (docs/design.md, "Command line")."""
    opts = dict(zip(args, args[1:]))
    verb = args[1]
    out = [opts[o] for o in ("--out", "--png") if o in opts and opts[o] != "-"]
    if out or "--estimate" in args:
        return out
    if verb == "prove":
        return [f"certificates/{args[2]}.json"]
    if verb == "compile":
        name = opts.get("--expr") or (Path(opts["--file"]).stem if "--file" in opts else opts["--program"].split(":")[-1] if "--program" in opts else args[2])
        return [f"models/{name}.{opts.get('--format', 'json')}"]
    if verb == "plot":
        return [f"plots/{args[2]}.png"]
    return []


def test_no_two_readme_commands_write_the_same_file():
    files = [f for c in COMMANDS for f in written(c)]
    assert "u.json" in files and "models/universal.json" in files  # the certificate and the model of U
    assert len(files) == len(set(files)), sorted(f for f in files if files.count(f) > 1)


def test_the_readme_says_png_needs_graphviz():
    lines = [line for line in README.splitlines() if "--png" in line]
    assert lines and all("Graphviz" in line for line in lines)
