"""The h5py + NumPy peer of `cqlwire convert FILE.hdf5 --dataset NAME`: read the dataset, convert it to
big-endian float32 in bulk (`astype('>f4').tobytes()`), write the values concatenated (the `raw` format)
to standard output."""
import sys

import h5py


def main(source: str, dataset: str) -> None:
    with h5py.File(source, "r") as f:
        data = f[dataset][:]
    out = sys.stdout.buffer
    out.write(data.astype(">f4").tobytes())
    out.flush()


if __name__ == "__main__":
    main(*sys.argv[1:3])
