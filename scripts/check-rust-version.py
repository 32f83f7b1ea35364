#!/usr/bin/env python3
"""Checks that no crate of the workspace needs a newer Rust than it declares: for each member with
a rust-version (Cargo.toml), every crate its build compiles — through normal and build dependencies,
every feature on, at the versions of Cargo.lock (dev-dependencies are not part of what a user
builds) — declares that version or an older one. Clippy's `incompatible_msrv` lint, in CI's clippy
step, checks that the code itself calls no standard-library API newer than its rust-version.

    cargo metadata --format-version 1 --locked --all-features | scripts/check-rust-version.py
"""
import json
import sys


def version(text):
    """"1.89" and "1.89.0" alike, as (1, 89, 0)."""
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    metadata = json.load(sys.stdin)
    packages = {package["id"]: package for package in metadata["packages"]}
    nodes = {node["id"]: node for node in metadata["resolve"]["nodes"]}
    newer, checked = [], 0
    for member in metadata["workspace_members"]:
        if not packages[member].get("rust_version"):
            continue
        declared = packages[member]["rust_version"]
        built, pending = set(), [member]
        while pending:
            node = nodes[pending.pop()]
            if node["id"] in built:
                continue
            built.add(node["id"])
            for dependency in node["deps"]:
                if any(kind["kind"] in (None, "build") for kind in dependency["dep_kinds"]):
                    pending.append(dependency["pkg"])
        checked += 1
        newer += [f"{packages[member]['name']} declares Rust {declared}, its dependency "
                  f"{packages[id]['name']} {packages[id]['version']} needs {packages[id]['rust_version']}"
                  for id in sorted(built)
                  if packages[id].get("rust_version")
                  and version(packages[id]["rust_version"]) > version(declared)]
    if newer:
        sys.exit("check-rust-version.py: " + "; ".join(newer))
    print(f"check-rust-version.py: {checked} crates, none needs a newer Rust than it declares")


if __name__ == "__main__":
    main()
