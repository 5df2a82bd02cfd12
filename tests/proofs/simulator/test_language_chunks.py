"""Exhaustive language checks in chunks: resumable chunk files, validated before being trusted, and Dask.

* A run interrupted after some chunks leaves no certificate, only whole chunk files; the next
  run computes only the missing chunks and gives the certificate one uninterrupted run gives.
* A chunk file that is not the chunk's (edited, truncated, another chunk's, or from another
  setup) is computed again, whether or not its own hash was fixed up.
* The chunks run on a Dask LocalCluster give the same certificate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attncert.exact.canonical import canonical_json
from attncert.proofs.core.certify import CLAIM_FIELDS
from attncert.proofs.cli import main
from attncert.proofs.simulator import languages
from attncert.proofs.simulator.chunks import digest
from attncert.proofs.simulator.languages import prove_match2, prove_parity


def claim_fields(doc: dict) -> dict:
    return {k: doc[k] for k in CLAIM_FIELDS}


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 8 words, and a record of the chunks computed (not read from a file)."""
    monkeypatch.setattr(languages, "CHUNK", 8)
    computed: list[tuple[str, int]] = []
    real = languages._run_chunk

    def counting(chunk):
        computed.append((chunk.case, chunk.start))
        return real(chunk)

    monkeypatch.setattr(languages, "_run_chunk", counting)
    return computed


PARAMS = {"max_M": 3, "max_length": 3}  # 1 + 1 + 1 + 2 + 4 + 8 + 3 + 9 + 27 = 56 words, 13 chunks of at most 8


def test_an_interrupted_run_resumes_to_the_uninterrupted_certificate(small_chunks, monkeypatch, tmp_path):
    whole = prove_match2(**PARAMS)
    total = len(small_chunks)
    assert total == 13
    small_chunks.clear()

    counting = languages._run_chunk

    def interrupted(chunk):
        if len(small_chunks) == 4:
            raise KeyboardInterrupt  # Ctrl-C while the fifth chunk runs
        return counting(chunk)

    monkeypatch.setattr(languages, "_run_chunk", interrupted)
    folder = tmp_path / "chunks"
    with pytest.raises(KeyboardInterrupt):
        prove_match2(**PARAMS, chunks=str(folder))
    files = sorted(folder.iterdir())
    assert len(files) == 4 and all(p.suffix == ".json" and not p.name.startswith(".") for p in files)

    monkeypatch.setattr(languages, "_run_chunk", counting)
    small_chunks.clear()
    resumed = prove_match2(**PARAMS, chunks=str(folder))
    assert len(small_chunks) == total - 4  # only the missing chunks ran
    assert claim_fields(resumed) == claim_fields(whole)
    small_chunks.clear()
    assert claim_fields(prove_match2(**PARAMS, chunks=str(folder))) == claim_fields(whole) and small_chunks == []


def _rewrite(path: Path, change, fix_hash: bool) -> None:
    doc = json.loads(path.read_bytes())
    change(doc)
    if fix_hash:
        body = {k: v for k, v in doc.items() if k != "sha256"}
        doc["sha256"] = digest(body)
    path.write_bytes(canonical_json(doc))


def _flip(field: str):
    """Change the first bit of a recorded string (U's readouts or the language values)."""

    def change(doc: dict) -> None:
        r = doc["results"][field]
        doc["results"][field] = ("1" if r[0] == "0" else "0") + r[1:]

    return change


@pytest.mark.parametrize(
    "change",
    [
        _flip("readouts"),  # U's readout of the chunk's first word (spot-checked)
        _flip("language"),  # the language values (re-derived)
        lambda d: d.update(inputs_sha256="0" * 64),  # not the hash of the words it covers
        lambda d: d["key"].update(start=d["key"]["start"] + 1),  # another chunk's key
        lambda d: d.update(setup_sha256=digest("another graph")),  # run through something else
    ],
    ids=["readouts", "language", "inputs", "key", "setup"],
)
@pytest.mark.parametrize("fix_hash", [False, True], ids=["hash-broken", "hash-fixed"])
def test_a_tampered_chunk_file_is_computed_again(small_chunks, tmp_path, change, fix_hash):
    whole = prove_parity(max_k=2, max_length=4)
    folder = tmp_path / "chunks"
    prove_parity(max_k=2, max_length=4, chunks=str(folder))
    victim = sorted(folder.iterdir())[0]
    _rewrite(victim, change, fix_hash)
    small_chunks.clear()
    doc = prove_parity(max_k=2, max_length=4, chunks=str(folder))
    assert len(small_chunks) == 1  # that chunk, and only it
    assert claim_fields(doc) == claim_fields(whole)


def test_a_truncated_or_foreign_chunk_file_is_computed_again(small_chunks, tmp_path):
    folder = tmp_path / "chunks"
    whole = prove_parity(max_k=1, max_length=4, chunks=str(folder))
    a, b = sorted(folder.iterdir())[:2]
    a.write_bytes(a.read_bytes()[:40])
    b.write_bytes(b"[]")
    small_chunks.clear()
    assert claim_fields(prove_parity(max_k=1, max_length=4, chunks=str(folder))) == claim_fields(whole)
    assert len(small_chunks) == 2


def test_prove_keeps_chunks_beside_the_certificate_until_it_is_written(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["prove", "match2", "--max-M", "2", "--max-length", "3", "--out", str(out)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]  # the chunk folder is gone once the certificate is there
    folder = tmp_path / "kept"
    assert main(["prove", "match2", "--max-M", "2", "--max-length", "3", "--out", str(out), "--chunks", str(folder)]) == 0
    assert len(list(folder.iterdir())) == 6  # one chunk per case (M = 1, 2; n = 1, 2, 3): a folder the user named is the user's


def test_chunks_on_a_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        on_cluster = prove_match2(max_M=3, max_length=4, scheduler=cluster.scheduler_address, chunks=str(tmp_path / "c"))
    assert claim_fields(on_cluster) == claim_fields(prove_match2(max_M=3, max_length=4))
    assert on_cluster["result"]["holds"]
