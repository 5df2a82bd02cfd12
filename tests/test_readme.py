"""The README stays true: its example runs, and CI runs its test command verbatim."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_example_runs():
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})


def test_ci_runs_the_readme_test_command_exactly():
    commands = re.findall(r"```sh\n(.*?)\n```", README, re.S)
    assert len(commands) == 2, "the README must show exactly two command lines"
    test_cmd = next(c for c in commands if "pytest" in c)
    assert test_cmd in (ROOT / ".ci" / "run").read_text()
    assert any("attncert prove-all" in c for c in commands)
