"""Scores a peer's serial answers with VectorDBBench's own functions (run by bench.py in the
VectorDBBench venv): recall and NDCG as its serial runner computes them, `calc_recall(k, gt[:k],
got)` and `calc_ndcg(gt[:k], got, get_ideal_dcg(k))` per query, `round(np.mean(...), 4)` over all.

    python bench_score.py ANSWERS.json NEIGHBORS.parquet K

ANSWERS.json holds a list of returned ids per query, in the test file's order (VectorDBBench pairs
the ground truth with the queries by position). Prints {"recall": …, "ndcg": …}.
"""

import json
import sys

import numpy as np
import pyarrow.parquet as pq
from vectordb_bench.metric import calc_ndcg, calc_recall, get_ideal_dcg


def main() -> None:
    answers, neighbors, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    found = json.loads(open(answers).read())
    truth = pq.read_table(neighbors, columns=["neighbors_id"]).column("neighbors_id").to_pylist()
    if len(found) != len(truth):
        sys.exit(f"{len(found)} answers for {len(truth)} ground-truth rows")
    ideal = get_ideal_dcg(k)
    recalls = [calc_recall(k, gt[:k], got) for gt, got in zip(truth, found)]
    ndcgs = [calc_ndcg(gt[:k], got, ideal) for gt, got in zip(truth, found)]
    print(json.dumps({"recall": round(float(np.mean(recalls)), 4), "ndcg": round(float(np.mean(ndcgs)), 4)}))


if __name__ == "__main__":
    main()
