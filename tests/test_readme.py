"""The README stays true: its example runs, and CI runs its test command verbatim."""

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert len(blocks) == 2
    exec(compile(blocks[0], "README.md", "exec"), {})
    # The second block uses the user's own functions; run its assertion line.
    exec(compile(blocks[1].splitlines()[-1], "README.md", "exec"), {"assert_exact_equal": importlib.import_module("attncert.exact.testing").assert_exact_equal, "EE": importlib.import_module("attncert.exact").EE})


def test_ci_runs_the_readme_test_command_exactly():
    commands = re.findall(r"```sh\n(.*?)\n```", README, re.S)[:2]
    assert all("\n" not in c for c in commands), "the README's first two blocks are one command line each"
    test_cmd = next(c for c in commands if "pytest" in c)
    assert test_cmd in (ROOT / ".ci" / "run").read_text()
    assert any("attncert prove-all" in c for c in commands)
