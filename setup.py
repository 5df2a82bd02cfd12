"""The package map (the rest of the metadata is in pyproject.toml): the folders exact/, constructions/
and proofs/ install as attncert.exact, attncert.constructions and attncert.proofs."""

from setuptools import find_packages, setup

FOLDERS = ("exact", "constructions", "proofs")

setup(
    packages=["attncert"] + [f"attncert.{p}" for p in find_packages(include=[f"{f}*" for f in FOLDERS])],
    package_dir={"attncert": "attncert", **{f"attncert.{f}": f for f in FOLDERS}},
)
