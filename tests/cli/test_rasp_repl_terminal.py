"""`attncert rasp` (the REPL) at a terminal, driven through a pseudo-terminal as a person types:
Ctrl-C, Ctrl-D, Tab, history, help, the running example, selector tables, errors, draw; and
piped input that errs.

Three processes start together (each start loads the RASP library, about a second): a REPL
that most tests share, each test with names of its own; a REPL whose history file is seeded,
which recalls a line and ends with Ctrl-D; and a REPL reading a pipe, which also draws (matplotlib
loads there, while the others run). The expected outputs were worked out by hand from the
language's meaning.
"""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from attncert.proofs.rasp_language.plot import SELECTED

_SCRIPT = Path(sys.executable).with_name("attncert")
ATTNCERT = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "attncert"]
#: Long enough for a loaded machine; a passing test waits only as long as the REPL takes.
TIMEOUT = 60
_ESCAPES = re.compile(rb"\x1b(\[[0-9;?]*[A-Za-z]|[=>])")


def environment(state: Path) -> dict[str, str]:
    """A clean terminal: no user inputrc, history under ``state``, home in the scratch folder."""
    return dict(os.environ, XDG_STATE_HOME=str(state), HOME=str(state), TERM="dumb", INPUTRC=os.devnull, ATTNCERT_NO_PROGRESS="1")


class Terminal:
    """A REPL on a pseudo-terminal that is its controlling terminal, so that ^C and ^D reach it as typed."""

    def __init__(self, cwd: Path, state: Path, args: list[str] = ()) -> None:
        cwd.mkdir(parents=True, exist_ok=True)
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            ATTNCERT + ["rasp", *args], stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=environment(state),
            start_new_session=True, preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )  # fmt: skip
        os.close(slave)
        self.seen = b""

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def expect(self, text: str) -> str:
        """What the REPL printed up to and including ``text`` (escape sequences and carriage returns removed)."""
        deadline = time.monotonic() + TIMEOUT
        while text not in self._clean(self.seen):
            ready, _, _ = select.select([self.master], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise AssertionError(f"{text!r} did not come; the REPL printed {self._clean(self.seen)!r}")
            try:
                self.seen += os.read(self.master, 65536)
            except OSError:  # the REPL ended: nothing more will come
                raise AssertionError(f"{text!r} did not come before the end; the REPL printed {self._clean(self.seen)!r}") from None
        clean = self._clean(self.seen)
        upto = clean.index(text) + len(text)
        # keep what came after text for the next expect
        self.seen = clean[upto:].encode()
        return clean[:upto]

    def rest(self) -> str:
        """Everything printed until the REPL ended."""
        self.process.wait(TIMEOUT)
        while select.select([self.master], [], [], 0.5)[0]:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.seen += chunk
        return self._clean(self.seen)

    def run(self, line: str) -> list[str]:
        """Type a line and Enter; the lines the REPL printed for it, up to its next prompt."""
        self.send(line + "\r")
        out = self.expect("\n>> ")
        return out[: -len("\n>> ")].split("\n")[1:]  # after the echoed line

    @staticmethod
    def _clean(raw: bytes) -> str:
        return _ESCAPES.sub(b"", raw).decode("utf-8", "replace").replace("\r", "")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(TIMEOUT)
        os.close(self.master)


#: What the piped REPL reads: statements that fail among others (each error names its line of the input),
#: and a draw.
PIPED = """x = 1;
y = 1 +, 2;
z = x +
  1;
w = z / 0;
prevs = select(indices, indices, <=);
draw(aggregate(prevs, indices) + selector_width(select(tokens, tokens, ==)));
"""


@pytest.fixture(scope="module")
def repls(tmp_path_factory):
    root = tmp_path_factory.mktemp("repl")
    seeded = root / "seeded"
    (seeded / "attncert").mkdir(parents=True)
    (seeded / "attncert" / "rasp_history").write_text("remembered = 41 + 1;\n")
    (root / "shared").mkdir()
    (root / "shared" / "mylib.rasp").write_text("def twice(a) { return a + a; }\n_hidden = 1;\ndoubled = twice(indices);\n")
    shared = Terminal(root / "shared", root / "shared-state", ["--max-steps", str(10**12)])
    recalling = Terminal(root / "recalling", seeded)
    preloaded = Terminal(root / "shared", root / "preloaded-state", ["-i", "mylib.rasp"])
    piped = subprocess.Popen(ATTNCERT + ["rasp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root, env=environment(root / "piped"))
    piped.stdin.write(PIPED.encode())
    piped.stdin.close()
    shared.expect("\n>> ")  # the greeting, then the first prompt
    yield {"shared": shared, "recalling": recalling, "preloaded": preloaded, "piped": piped, "root": root, "seeded": seeded}
    shared.close()
    recalling.close()
    preloaded.close()
    if piped.poll() is None:
        piped.kill()
    piped.wait(TIMEOUT)


def test_the_session_starts_on_hello_and_shows_a_selector_as_the_reference_does(repls):
    # select(keys, queries, <): query q selects the keys before it
    assert repls["shared"].run("earlier = select(indices, indices, <);") == [
        "earlier = selector (query rows, key columns):",
        "        h e l l o",
        "    h |",
        "    e | 1",
        "    l | 1 1",
        "    l | 1 1 1",
        "    o | 1 1 1 1",
    ]
    assert repls["shared"].run("show example") == ['example: ["h", "e", "l", "l", "o"]']


def test_ctrl_c_drops_the_line_being_typed_and_the_session_goes_on(repls):
    t = repls["shared"]
    assert t.run("kept = 7;") == ["kept = 7"]
    t.send("kept = kept + ")
    t.expect("kept = kept + ")
    t.send("\x03")
    t.expect("\n>> ")
    assert t.run("kept;") == ["out = 7"]


def test_ctrl_c_stops_a_running_statement_and_the_session_goes_on(repls):
    t = repls["shared"]
    assert t.run("before = 1/3;") == ["before = 1/3 (≈ 0.333333)"]
    t.send("for i in range(1000) { for j in range(1000) { spin = i * j; } }\r")  # a million steps: many seconds
    t.expect("} }\n")
    time.sleep(0.5)
    t.send("\x03")
    assert t.expect("\n>> ").endswith("interrupted\n>> ")
    assert t.run("before * 3;") == ["out = 1"]


def test_tab_completes_the_sessions_names(repls):
    t = repls["shared"]
    assert t.run("tab_completion_target = 5;") == ["tab_completion_target = 5"]
    t.send("tab_compl\t")
    t.expect("tab_completion_target")
    assert t.run(";") == ["out = 5"]


def test_help_lists_the_commands_and_says_what_a_name_is(repls):
    t = repls["shared"]
    out = t.run("help")
    assert any(line.strip().startswith("draw(SEQ)") for line in out) and "Tab completes names; the lines typed are kept between sessions." in out
    assert t.run("help count") == ["count: a function, def count(seq, atom)"]
    assert t.run("help nothing_by_this_name") == ["nothing_by_this_name: no such name"]


@pytest.mark.parametrize(
    "line, error",
    [
        ("1/0;", "error: <repl>:1:1: division by zero"),
        ("select(indices, indices, <) + 1;", "error: <repl>:1:1: '+' is not defined between a selector and a number"),
    ],
)
def test_errors_are_one_plain_line_with_the_position(repls, line, error):
    assert repls["shared"].run(line) == [error]


def test_a_syntax_error_shows_the_line_and_a_caret_under_the_column_as_python_does(repls):
    assert repls["shared"].run("y = 1 +, 2;") == ["error: <repl>:1:8: unexpected ','; expected an expression", "  y = 1 +, 2;", "         ^"]
    head, line, caret = repls["shared"].run("   q = (1;")  # indented: the caret stays under the column
    assert head.startswith("error: <repl>:1:10: unexpected ';'") and line == "     q = (1;" and caret.index("^") == line.index(";")


def test_load_lists_the_names_it_set(repls):
    t = repls["shared"]
    assert t.run('load "mylib";') == ["loaded mylib: doubled, twice"]  # _hidden is private to the file
    assert t.run("twice(21);") == ["out = 42"]


def test_examples_off_shows_what_a_sequence_is_and_on_its_values(repls):
    t = repls["shared"]
    assert t.run("examples off") == ["examples off: assignments show what a sequence or selector is, not its values"]
    assert t.run("shouted = tokens + \"!\";") == ["shouted = <sequence shouted>"]
    assert t.run("same = select(tokens, tokens, ==);") == ["same = <selector same>"]
    assert t.run("half = 1/2;") == ["half = 1/2 (≈ 0.5)"]  # a plain value still shows
    assert t.run("examples on") == ["examples on: assignments show the values on the example"]
    assert t.run("shouted;") == ['out = ["h!", "e!", "l!", "l!", "o!"]']
    assert t.run("selector examples off") == ["error: examples on|off switches every kind at once (attncert has no per-kind switch)"]


@pytest.mark.parametrize("name", ["select", "aggregate", "selector_width", "tokens", "indices", "length", "zip", "range", "round", "indicator"])
def test_help_explains_each_primitive(repls, name):
    (line,) = repls["shared"].run(f"help {name}")
    assert line.startswith(name) and "no such name" not in line and len(line) > len(name) + 20, line


def test_help_select_and_aggregate_say_what_they_compute(repls):
    t = repls["shared"]
    (select,) = t.run("help select")
    assert "keys[k] op queries[q]" in select and "a selector" in select
    (aggregate,) = t.run("help aggregate")
    assert "mean of values at the keys it selects" in aggregate and "default" in aggregate


def test_dash_i_opens_the_repl_with_the_file_run(repls):
    t = repls["preloaded"]
    assert t.expect("\n>> ").endswith("loaded mylib.rasp: _hidden, doubled, twice\n>> ")  # as python -i: its own names too
    assert t.run("doubled;") == ["out = [0, 2, 4, 6, 8]"]
    assert t.run("_hidden + 1;") == ["out = 2"]


def test_history_persists_between_sessions_and_ctrl_d_ends_on_a_new_line(repls):
    t = repls["recalling"]
    t.expect("\n>> ")
    t.send("\x10\r")  # Ctrl-P: the line before, from the history file of an earlier session
    assert t.expect("\n>> ").endswith("remembered = 41 + 1;\nremembered = 42\n>> ")
    assert t.run("fresh = 1;") == ["fresh = 1"]
    t.send("\x04")
    assert t.rest() == "\n" and t.process.returncode == 0
    saved = (repls["seeded"] / "attncert" / "rasp_history").read_text().splitlines()
    assert saved == ["remembered = 41 + 1;", "fresh = 1;"]  # a line run again is not kept twice in a row


def piped(repls) -> tuple[list[str], str, int]:
    """The piped REPL's output (split at its prompts), standard error and exit code, once it has ended."""
    if "piped result" not in repls:
        p = repls["piped"]
        out, err = p.stdout.read().decode(), p.stderr.read().decode()  # a few hundred bytes: no pipe fills
        repls["piped result"] = out.split(">> "), err, p.wait(TIMEOUT)
    return repls["piped result"]


def test_piped_input_that_errs_exits_2_each_error_at_its_line_of_the_input(repls):
    out, err, code = piped(repls)
    assert code == 2
    assert out[:5] == [
        "",
        "x = 1\n",
        "error: <stdin>:2:8: unexpected ','; expected an expression\n  y = 1 +, 2;\n         ^\n",
        ".. z = 2\n",  # lines 3 and 4: one statement
        "error: <stdin>:5:5: division by zero\n",
    ]
    assert out[-1] == "\n"  # the end of the input ends the prompt's line
    assert err.splitlines()[-1] == "attncert: error: 2 statements of the input failed (above)" and "Traceback" not in err


def test_draw_writes_a_png_of_each_attentions_selection_pattern(repls):
    out, _, _ = piped(repls)
    name = "aggregate_prevs_indices_selector_width_select_tokens_tokens"
    program = "aggregate(prevs, indices) + selector_width(select(tokens, tokens, ==))"
    # the attentions read prevs (aggregate) and select(tokens, tokens, ==) (selector_width): two patterns
    assert out[-2] == f'draw: 2 selection patterns of {program} on ["h", "e", "l", "l", "o"] in selections/{name}.png\n'
    data = (repls["root"] / "selections" / f"{name}.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    assert image.shape[0] > 200 and image.shape[1] > 400  # two panels side by side
    target = np.array([int(SELECTED[i : i + 2], 16) for i in (1, 3, 5)])
    assert (np.abs(image - target).sum(axis=2) <= 6).sum() > 1000  # cells filled: not blank
