"""Help and output that read well (issue 35, part 4): one spelling of each option in --help (kebab-case; the
underscore aliases still work), the limits in their own section after the verb's options with each default
said once, parameter lists cut between parameters, and the lazy names of ``attncert`` visible to dir()."""

import re
import subprocess
import sys

import pytest

from attncert.proofs.cli import main
from attncert.proofs.core.figures import abbreviate


def help_of(*words: str) -> str:
    r = subprocess.run([sys.executable, "-m", "attncert", *words, "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("words", [("prove", "compiled"), ("prove", "sinkhorn_convergence"), ("prove", "tracr_model"), ("compile",), ("verify",), ("rasp",), ("sweep",)])
def test_help_shows_kebab_case_and_the_limits_last_each_default_once(words):
    text = help_of(*words)
    usage, body = text.split("\n\n", 1)
    assert not re.search(r"--\w+_\w", text), re.findall(r"--\w+_[\w-]*", text)  # no --max_seq_len, --ref_iter
    assert "--max-positions" not in usage and "[--max-LIMIT N]" in usage  # the limits, once, in the usage
    sections = re.findall(r"^(\S[^\n]*):\n", body, re.M)
    assert sections[-1].startswith("limits (docs/limits.md"), sections  # after the verb's own options
    limits = body.split(sections[-1] + ":\n", 1)[1]
    assert "--max-" in limits and all(line.lstrip().startswith("--max-") or line.startswith(" " * 20) for line in limits.splitlines() if line)
    for entry in re.split(r"\n  (?=-)", text):
        assert entry.count("(default") <= 1, entry  # said once


def test_the_underscore_aliases_are_still_accepted(tmp_path, capsys):
    args = ["prove", "compiled", "--file", str(tmp_path / "p.rasp"), "--expr", "p", "--vocab", "a,b", "--out", "-"]
    (tmp_path / "p.rasp").write_text("p = tokens;\n")
    assert main([*args, "--max_seq_len", "2"]) == 0
    assert main([*args, "--max-seq-len", "2"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:  # the alias and the name are one option: given once
        main([*args, "--max_seq_len", "2", "--max-seq-len", "3"])
    assert e.value.code == 2 and "given twice" in capsys.readouterr().err


def test_a_parameter_list_is_cut_between_parameters():
    sizes = "bos=BOS,causal=0,listed=10,max_inputs=100000,max_seq_len=3,precision=64,tolerance=1/1000000"
    assert abbreviate(sizes, 80) == sizes[:80].rsplit(",", 1)[0] + ",…"  # whole parameters, then …
    assert abbreviate(sizes, 80).endswith("precision=64,…") and len(abbreviate(sizes, 80)) <= 80
    assert abbreviate(sizes, len(sizes)) == sizes and abbreviate("abcdefgh", 5) == "abcd…"


def test_prove_all_rows_are_cut_between_parameters(capsys):
    from attncert.proofs.cli.output import print_row

    print_row(["x", "alpha=1,beta=22,gamma=333"], [1, 20])
    assert capsys.readouterr().out.split() == ["x", "alpha=1,beta=22,…"]


def test_dir_of_attncert_lists_what_loads_on_first_use():
    code = "import attncert; print(' '.join(dir(attncert))); print(attncert.certify_plan.__name__)"
    names = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.split()
    assert {"exact", "constructions", "proofs", "sinkhorn", "emd", "emd2", "certify_plan", "certify_tracr"} <= set(names[:-1])
    assert "Any" not in names and names[-1] == "certify_plan"
