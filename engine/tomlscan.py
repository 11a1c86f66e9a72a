"""A pre-parse scan of a config's TOML: nesting depth and dotted keys, bounded before ``tomllib`` runs.

``tomllib`` takes quadratic time and memory in the parts of a dotted key (``a.a.….a = 1`` with 20,000 parts:
15 s and 1.6 GB) and recurses once per level of nested arrays and inline tables (``a = [[[…]]]`` ends in
``RecursionError``).  No real config comes near these limits, so :func:`scan` refuses anything beyond them
in one linear pass that knows TOML's strings (basic, literal, multi-line) and comments — a ``[`` or a
``.`` inside a string or a comment counts for nothing.  It checks, it does not parse: anything it does not
understand is left for ``tomllib`` to report.

>>> scan('a.b.c = [[1, 2], {x = "[[[."}]  # [[[[\\n[t.u]\\nv = 1\\n')
>>> scan("k" + ".k" * 40 + " = 1")
Traceback (most recent call last):
veil.tomlscan.Exceeded: line 1: a dotted key of more than 32 parts (the limit)
>>> scan("x = 1\\na = " + "[" * 40 + "]" * 40)
Traceback (most recent call last):
veil.tomlscan.Exceeded: line 2: arrays and inline tables nested more than 32 deep (the limit)
"""

from __future__ import annotations

import re

MAX_DEPTH = 32  # nested arrays, inline tables and table headers
MAX_KEY_PARTS = 32  # parts of one dotted key (a header's or a key/value pair's)
MAX_KEY_CHARS = 10_000  # characters of one key, its dots and quotes included

_SPACE = re.compile(r"[ \t\r]+")
_BARE = re.compile(r"[A-Za-z0-9_\-+:]+")  # bare keys, and numbers, booleans and dates in values
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL = re.compile(r"'[^'\n]*'")


class Exceeded(ValueError):
    """The text goes beyond a limit: the message names the line and the limit."""


def _multiline_end(text: str, start: int, quote: str) -> int:
    """The end of a multi-line string whose content starts at ``start`` (after the opening ``\"\"\"`` or
    ``'''``): after the first closing delimiter not escaped (basic strings only) and up to two more quotes
    (which belong to the content); the end of the text if it is never closed."""
    delimiter = quote * 3
    i = start
    while True:
        j = text.find(delimiter, i)
        if j < 0:
            return len(text)
        if quote == '"':
            k = j
            while k > start and text[k - 1] == "\\":
                k -= 1
            if (j - k) % 2 == 1:  # an escaped quote: the delimiter starts after it
                i = j + 1
                continue
        end = j + 3
        for _ in range(2):
            if end < len(text) and text[end] == quote:
                end += 1
        return end


def _string_end(text: str, pos: int) -> int:
    """The end of the string starting at ``pos`` (the end of its line if it is not closed there)."""
    quote = text[pos]
    if text.startswith(quote * 3, pos):
        return _multiline_end(text, pos + 3, quote)
    match = (_BASIC if quote == '"' else _LITERAL).match(text, pos)
    if match:
        return match.end()
    newline = text.find("\n", pos)
    return len(text) if newline < 0 else newline


class _Scan:
    """The scanner's state: the line, the nesting depth and the dotted key being read."""

    def __init__(self) -> None:
        self.line = 1
        self.depth = 0
        self.header = False  # inside a [table] or [[array]] header
        self.line_start = True  # nothing but spaces so far on this line
        self.parts = 0  # parts of the current dotted chain (0: none)
        self.start = self.end = 0
        self.after_dot = False

    def segment(self, start: int, end: int) -> None:
        """A bare word or a string: the next part of a dotted key, or the start of a new one."""
        if self.parts and self.after_dot:
            self.parts += 1
        else:
            self.parts, self.start = 1, start
        self.end, self.after_dot, self.line_start = end, False, False
        if self.parts > MAX_KEY_PARTS:
            raise Exceeded(f"line {self.line}: a dotted key of more than {MAX_KEY_PARTS} parts (the limit)")

    def dot(self) -> None:
        if self.parts and not self.after_dot:
            self.after_dot = True
        else:
            self.parts = 0
        self.line_start = False

    def other(self, char: str) -> None:
        """Anything else ends the dotted chain: ``=`` (or a header's ``]``) after it makes it a key."""
        if self.parts and (char == "=" or (self.header and char == "]")) and self.end - self.start > MAX_KEY_CHARS:
            raise Exceeded(f"line {self.line}: a key longer than {MAX_KEY_CHARS} characters (the limit)")
        self.parts, self.after_dot = 0, False
        if char in "[{":
            self.header = self.header or (char == "[" and self.line_start and self.depth == 0)
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise Exceeded(
                    f"line {self.line}: arrays and inline tables nested more than {MAX_DEPTH} deep (the limit)"
                )
        elif char in "]}":
            self.depth = max(self.depth - 1, 0)
            self.header = self.header and self.depth > 0
        if char == "\n":
            self.line, self.line_start = self.line + 1, True
        else:
            self.line_start = False


def scan(text: str) -> None:
    """Refuse (:class:`Exceeded`) TOML ``text`` nested deeper than ``MAX_DEPTH`` or with a key of more than
    ``MAX_KEY_PARTS`` dotted parts or ``MAX_KEY_CHARS`` characters; linear in the text's length."""
    state = _Scan()
    pos, n = 0, len(text)
    while pos < n:
        char = text[pos]
        if char in " \t\r":
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        elif char == "#":
            newline = text.find("\n", pos)
            pos = n if newline < 0 else newline
        elif char in "\"'":
            end = _string_end(text, pos)
            state.segment(pos, end)
            state.line += text.count("\n", pos, end)
            pos = end
        elif char == ".":
            state.dot()
            pos += 1
        else:
            bare = _BARE.match(text, pos)
            if bare:
                state.segment(pos, bare.end())
                pos = bare.end()
            else:
                state.other(char)
                pos += 1
