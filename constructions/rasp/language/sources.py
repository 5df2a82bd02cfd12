"""Where a RASP program's files come from: the disk, or the texts a certificate records.

A file is named by the path the interpreter forms (the loading file's folder joined
with the name in ``load``), normalised without touching the disk
(``os.path.normpath``). Proving reads those names from the disk and remembers each
text it served; verifying serves the recorded texts under the same names and
never reads the disk, so the same program loads the same files in both.

attncert's own programs (``programs/``, installed with the package) are named
``<attncert>/NAME.rasp`` wherever the package is installed (:func:`portable_name`),
so that a certificate of one records the same name on every machine; their loads
(``load "layout"``) resolve beside them under that name too. Only the disk side
(:class:`DiskFiles`, :func:`read_source`) maps such a name to the installed file.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path

from attncert.exact.certificate import read_bounded
from attncert.exact.errors import ParseError

#: The folder of attncert's own programs, and the name it has in a run: the same on every machine.
BUNDLED_DIRECTORY = Path(__file__).resolve().parent / "programs"
BUNDLED = "<attncert>"


def portable_name(path: str) -> str:
    """The name a run gives the file at ``path``: ``<attncert>/NAME.rasp`` for a file of attncert's own
    programs (given so, or by a path into the installed folder), else the normalised path as given."""
    name = os.path.normpath(path)
    if name.startswith(BUNDLED + os.sep):
        return name
    try:
        inside = Path(name).resolve().relative_to(BUNDLED_DIRECTORY)
    except ValueError:
        return name
    return os.path.join(BUNDLED, str(inside))


def on_disk(name: str) -> str:
    """Where the file a run names ``name`` is read from: a bundled program in the installed folder."""
    return str(BUNDLED_DIRECTORY / name[len(BUNDLED) + 1 :]) if name.startswith(BUNDLED + os.sep) else name


def read_source(path: str) -> str:
    """The text of a RASP source file (a regular file within the byte limit, UTF-8); a ``<attncert>/``
    name is read from the installed programs."""
    try:
        return read_bounded(on_disk(os.path.normpath(path))).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from None


class Files(ABC):
    """The files a run may load; ``served`` holds the text of each file loaded, by name, in load order."""

    def __init__(self) -> None:
        self.served: dict[str, str] = {}

    @abstractmethod
    def find(self, path: str) -> str | None:
        """The name of the file at ``path``, or None if there is none."""

    def read(self, name: str) -> str:
        """The text of a file that :meth:`find` named."""
        text = self._text(name)
        self.served[name] = text
        return text

    @abstractmethod
    def _text(self, name: str) -> str:
        """The text of the named file."""


class DiskFiles(Files):
    """The file system (``attncert rasp``, and proving a certificate)."""

    def find(self, path: str) -> str | None:
        name = portable_name(path)
        return name if os.path.isfile(on_disk(name)) else None

    def _text(self, name: str) -> str:
        return read_source(name)


class RecordedFiles(Files):
    """The texts recorded in a certificate, by name; the disk is never read."""

    def __init__(self, texts: dict[str, str]):
        super().__init__()
        self.texts = texts

    def find(self, path: str) -> str | None:
        name = os.path.normpath(path)
        return name if name in self.texts else None

    def _text(self, name: str) -> str:
        return self.texts[name]
