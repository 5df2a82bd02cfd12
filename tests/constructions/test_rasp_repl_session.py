"""The REPL's session (session.Repl) in process: plain one-line errors for every pairing of value
kinds, syntax errors in words, draw's patterns, the running example, help. The terminal itself
(Ctrl-C, Ctrl-D, Tab, history) is driven through a pseudo-terminal in tests/cli/test_rasp_repl_terminal.py.
"""

from __future__ import annotations

import io
import itertools
import re

import pytest

from attncert.constructions import rasp
from attncert.constructions.rasp.language import session
from attncert.constructions.rasp.language.parser import RaspSyntaxError, parse
from attncert.constructions.rasp.patterns import attended, table


def run(lines: list[str], **options) -> list[str]:
    feed = iter(lines)

    def read(prompt: str) -> str:
        line = next(feed, None)
        if line is None:
            raise EOFError
        return line

    out = io.StringIO()
    session.repl(read, out, **options)
    return out.getvalue().splitlines()


#: One value of each kind the language has, as source.
KINDS = {
    "number": "2",
    "string": '"a"',
    "boolean": "True",
    "list": "[1]",
    "dict": '{"a": 1}',
    "numbers": "indices",
    "characters": "tokens",
    "selector": "select(indices, indices, ==)",
    "function": "count",
}
#: Python's own words, which no message to a user should hold.
INTERNALS = re.compile(r"Error\b|Token\(|flint|fmpq|lambda|object at|<class|Traceback|type\(s\)|NoneType|builtins|iterable|concatenate|\binstances\b")
#: A line the REPL prints for a statement: a value (a selector's table follows), or one error line with its place.
ANSWER = re.compile(r"^(r = |error: (<repl>:1:\d+: |at node '[^']*' \(\w+(, written at <repl>:1:\d+[^)]*)?\): ))")


def test_every_operation_on_every_kind_of_value_answers_in_the_languages_words():
    statements = [f"r = {a} {op} {b};" for a, b in itertools.product(KINDS.values(), repeat=2) for op in ("+", "%", "^", "<", "and", "in")]  # an operator of each way the interpreter computes one
    statements += [f"r = {u}{a};" for u in ("-", "not ") for a in KINDS.values()] + [f"r = round({a});" for a in KINDS.values()]
    statements += [f"r = {a}[{b}];" for a, b in itertools.product(KINDS.values(), repeat=2)]
    statements += [f"r = {a}({b});" for a, b in itertools.product(KINDS.values(), repeat=2)]
    out = run(statements)
    answers = [line for line in out if not line.startswith("    ")]  # a selector's table rows are indented
    assert len(answers) == len(statements)
    for statement, line in zip(statements, answers):
        assert ANSWER.match(line), (statement, line)
        assert not INTERNALS.search(line), (statement, line)


@pytest.mark.parametrize(
    "statement, message",
    [  # worked out by hand from the language's types, on the running example "hello"
        ("1 / 0;", "<repl>:1:1: division by zero"),
        ("7 % 0;", "<repl>:1:1: division by zero"),
        ('"a" + 1;', "<repl>:1:1: '+' is not defined between a string and a number"),
        ("select(indices, indices, <) + 1;", "<repl>:1:1: '+' is not defined between a selector and a number"),
        ("tokens < select(indices, indices, ==);", "<repl>:1:1: '<' is not defined between a sequence and a selector"),
        ("indices * [1, 2];", "<repl>:1:1: '*' is not defined between a sequence and a list"),
        ('-"a";', "<repl>:1:1: '-' is not defined for a string"),
        ('round("a");', "<repl>:1:1: round takes a number or a sequence, not a string"),
        ("selector_width(1);", "<repl>:1:1: selector_width takes a selector as sel, not a number"),
        ("tokens(3);", "<repl>:1:1: a sequence applies to an input, a string or a list, not a number"),
        ('2 in "a";', "<repl>:1:1: 'in' is not defined between a number and a string"),
        ("[1, 2][2];", "<repl>:1:1: index 2 is out of range for a list of length 2"),
        ("tokens + 1;", "at node 'map' (map, written at <repl>:1:1): '+' is not defined between the string \"h\" and the number 1 (at position 0)"),
        ('tokens + "!" - 1;', "at node 'map' (map, written at <repl>:1:1 (fused with the map at <repl>:1:1)): '-' is not defined between the string \"h!\" and the number 1 (at position 0)"),
        ("tokens_int;", "at node 'tokens_int' (map): the token \"h\" is not an integer (tokens_int)"),
    ],
)
def test_an_error_is_one_plain_line_with_its_place(statement, message):
    assert run([statement]) == [f"error: {message}"]


@pytest.mark.parametrize(
    "source, message",
    [
        ("x = 1 +, 2;", "<input>:1:8: unexpected ','; expected an expression | x = 1 +, 2; |        ^"),
        ("x = (1;", "<input>:1:7: unexpected ';'; expected ')' | x = (1; |       ^"),
        ("def f(a) { return a }", "<input>:1:21: unexpected '}'; expected ',' or ';' | def f(a) { return a } |                     ^"),
        ('x = "abc', '<input>:1:5: a string that does not end on its line | x = "abc |     ^'),
        ("select(indices, indices, ~);", "<input>:1:26: unexpected character '~'; expected a comparison (==, !=, <, <=, >, >=) | select(indices, indices, ~); |                          ^"),
        ("for x in [1] { y = x;", "<input>:1:22: unexpected end of input; expected a statement or '}' | for x in [1] { y = x; |                      ^"),
    ],
)
def test_a_syntax_error_says_what_was_expected_in_words(source, message):
    with pytest.raises(RaspSyntaxError) as e:
        parse(source)
    assert str(e.value) == message


def test_the_session_starts_on_the_references_example():
    assert run(["show example", "tokens;", "length;"]) == ['example: ["h", "e", "l", "l", "o"]', 'out = ["h", "e", "l", "l", "o"]', "out = [5, 5, 5, 5, 5]"]


def test_draw_hands_each_attentions_selection_on_the_example_to_the_drawing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    calls = []

    def draw(patterns, tokens, title):
        calls.append((patterns, tokens, title))
        return b"picture"

    program = "aggregate(select(tokens, tokens, <), indices) + selector_width(select(indices, indices, ==))"
    out = run([f"draw({program});", 'draw(select(tokens, tokens, ==), "abca");', "draw(tokens + 1);", "draw(3);"], draw=draw)
    assert out == [
        f'draw: 2 selection patterns of {program} on ["h", "e", "l", "l", "o"] in selections/aggregate_select_tokens_tokens_indices_selector_width_select.png',  # 60 characters
        'draw: 1 selection pattern of select(tokens, tokens, ==) on ["a", "b", "c", "a"] in selections/select_tokens_tokens.png',
        'draw: tokens + 1 on ["h", "e", "l", "l", "o"] reads no selector; nothing to draw',
        "error: <repl>:1:1: draw takes a sequence or a selector, not a number",
    ]
    (earlier, same_place), tokens, title = calls[0]
    word = "hello"
    assert tokens == list(word) and title == f'{program} on ["h", "e", "l", "l", "o"]'
    assert earlier.title == "select(tokens, tokens, <)" and earlier.matrix == tuple(tuple(k < q for k in word) for q in word)
    assert same_place.title == "select(indices, indices, ==)" and same_place.matrix == tuple(tuple(k == q for k in range(5)) for q in range(5))
    (same,), tokens, _ = calls[1]
    assert tokens == list("abca") and same.matrix == tuple(tuple(k == q for k in "abca") for q in "abca")
    assert (tmp_path / "selections" / "select_tokens_tokens.png").read_bytes() == b"picture"


def test_a_selector_read_by_several_attentions_is_drawn_once_children_first():
    first = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    second = rasp.Select(rasp.tokens, rasp.Aggregate(first, rasp.tokens), rasp.Comparison.EQ)
    program = rasp.SelectorWidth(second) + rasp.numerical(rasp.Aggregate(first, rasp.indices, default=0))
    assert attended(program) == [first, second]
    assert attended(first) == [first]


def test_the_table_of_a_selection_is_the_references():
    # the reference REPL's print_select: keys across, one row per query, 1 where selected
    assert table([[False, True], [True, True]], ["ab", "c"]) == ["         ab  c", "    ab |     1", "     c |  1  1"]


def test_help_and_the_names_tab_completes():
    out = run(["help", "help length", "x = 1/2;", "help x"])
    assert out[0].startswith("Statements end with ';'") and "help length" not in out
    assert out[-3:] == ["length: the input's length at every position, a numerical sequence", "x = 1/2", "x: a number, 1/2"]
    repl = session.Repl(io.StringIO())
    repl.statement("my_name = 3;")
    names = repl.names()
    assert {"my_name", "tokens", "count", "select(", "help"} <= set(names) and names == sorted(names)


def test_ctrl_c_drops_a_line_when_typed_and_ends_a_piped_run():
    def reader(events):
        feed = iter(events)

        def read(prompt: str) -> str:
            event = next(feed)
            if event is KeyboardInterrupt:
                raise KeyboardInterrupt
            return event

        return read

    out = io.StringIO()
    repl = session.Repl(out)
    assert repl.run(reader(["x = 1;", KeyboardInterrupt, "x + 1;", "exit"])) == 0
    assert out.getvalue().splitlines() == ["x = 1", "", "out = 2"]  # the dropped line ends under its ^C
    with pytest.raises(KeyboardInterrupt):  # piped input: Ctrl-C is the command line's, which ends the run
        session.Repl(io.StringIO()).run(reader(["x = 1;", KeyboardInterrupt, "exit"]), ctrl_c_per_line=False)
