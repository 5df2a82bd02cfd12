"""Resumable partial results of an exhaustive check: one file per chunk of inputs.

A long exhaustive run (every word up to some length) is split into chunks; when
a chunk folder is given, each finished chunk's results are written there at once,
atomically (a temporary file renamed into place), so a run that is interrupted
loses only the chunks in progress, and the next run with the same folder resumes
from the files. The certificate itself is written only at the end of a run, so an
interrupted run leaves none.

A chunk file is trusted only if it answers exactly the question being asked:

* its ``key`` (claim, case, the range of inputs) is the chunk's;
* ``inputs_sha256``, the hash of the inputs it covers, equals the hash of the
  inputs re-derived from the key, and ``setup_sha256`` the hash of what they were
  run through (the graph, the layer, the attncert version);
* ``sha256`` is the hash of the rest of the file (a truncated or edited file fails);
* the caller then re-derives what it can cheaply (:meth:`ChunkStore.load` takes a
  ``check``): the language values from their definition, and U's readouts on a
  sample of the chunk's words, evaluated again.

Whatever fails is computed again. The verifier never reads chunk files: it
re-runs everything.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable

from attncert.exact.canonical import canonical_json, json_equal, sha256_hex
from attncert.exact.certificate import atomic_write_bytes
from attncert.exact.errors import AttncertError

FORMAT = "attncert-chunk/1"


def digest(obj: Any) -> str:
    """sha256 of the canonical JSON of obj (bytes are hashed as they are)."""
    return hashlib.sha256(obj).hexdigest() if isinstance(obj, bytes) else sha256_hex(obj)


class ChunkStore:
    """The chunk files of one claim in one folder."""

    def __init__(self, folder: str | Path, claim: str):
        self.folder, self.claim = Path(folder), claim
        if self.folder.exists() and not self.folder.is_dir():
            raise AttncertError(f"chunk folder {self.folder} exists and is not a folder")

    def _path(self, key: dict[str, Any]) -> Path:
        return self.folder / f"{self.claim}-{digest(key)[:20]}.json"

    def save(self, key: dict[str, Any], inputs_sha256: str, setup_sha256: str, results: dict[str, Any]) -> None:
        body = {"format": FORMAT, "claim": self.claim, "key": key, "inputs_sha256": inputs_sha256, "setup_sha256": setup_sha256, "results": results}
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(self._path(key), canonical_json({**body, "sha256": digest(body)}))

    def load(
        self, key: dict[str, Any], inputs_sha256: str, setup_sha256: str, check: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any] | None:
        """The chunk's recorded results if its file passes every test of the module docstring, else None."""
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            doc = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
            return None
        body = {k: v for k, v in doc.items() if k != "sha256"}
        expected = {"format": FORMAT, "claim": self.claim, "key": key, "inputs_sha256": inputs_sha256, "setup_sha256": setup_sha256}
        if not all(json_equal(body.get(k), v) for k, v in expected.items()) or set(body) != {*expected, "results"}:
            return None
        if doc.get("sha256") != digest(body) or not check(body["results"]):
            return None
        return body["results"]
