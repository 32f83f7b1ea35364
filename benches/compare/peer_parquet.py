"""The pyarrow + NumPy peer of `cqlwire convert FILE.parquet -o OUT`: read the table, byte-swap the
float list column to big-endian in bulk, write the values concatenated (the `raw` format) to standard
output."""
import sys

import numpy as np
import pyarrow.parquet as pq


def main(source: str, column: str) -> None:
    table = pq.read_table(source, columns=[column])
    out = sys.stdout.buffer
    for chunk in table.column(column).chunks:
        values = chunk.flatten().to_numpy(zero_copy_only=False)
        out.write(np.asarray(values, ">f4").tobytes())
    out.flush()


if __name__ == "__main__":
    main(*sys.argv[1:3])
