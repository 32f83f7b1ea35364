"""Type stubs of the native module (the functions' docstrings have examples)."""

import os
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union, final

import numpy
import numpy.typing

# What the native module exports, in its order. Defaults shown as `...` below are those the module's
# own signatures (PyO3's) show as `...`; their values are in a comment beside them.
__all__ = [
    "lz4_compress", "lz4_decompress", "encode", "decode", "explain", "serialize_vectors",
    "deserialize_vectors", "VectorCodec", "DriverSerializer", "load", "LoadReport", "unload",
    "UnloadReport", "search", "SearchReport", "bench", "LoadError", "LoadFailed", "UsageError", "JobFailed",
    "RefusedValueWarning", "DEFAULT_MAX_SIZE", "_object_layout",
]

DEFAULT_MAX_SIZE: int
"""The default ``max_size`` of :func:`lz4_decompress`: 256 MiB."""
_object_layout: Tuple[bool, bool, bool]
"""Which of (list, tuple, float) ``VectorCodec`` reads through CPython's object layout, proven at
import (python/README.md, "Speed")."""

BytesLike = Union[bytes, bytearray, memoryview]
Json = Any
"""A value in the JSON shapes of ``cqlwire decode --format json`` (None, bool, int, float, str,
list, dict)."""

def serialize_vectors(
    data: Any,
    cql_type: Union[str, None] = None,
    *,
    format: Literal["list", "raw", "framed"] = "list",
) -> Union[list, bytes]:
    """Serialize rows of numbers into CQL ``vector<T, N>`` values.

    ``data``: a 2-D NumPy array (float16/32/64, int8/16/32/64, uint8, bool; either byte order; C or
    Fortran order), a pyarrow Array / ChunkedArray / RecordBatch / Table with a list, large_list or
    fixed_size_list column, or a sequence of sequences. Null rows (a null Arrow row, a ``None`` row
    of a sequence, a fully masked row of a ``numpy.ma`` array) are None with ``format="list"``,
    ``-1`` with ``"framed"`` and an error with ``"raw"``; a masked element of a row is an error.
    ``format="list"`` returns one ``bytes`` per row, ``"raw"`` the values concatenated,
    ``"framed"`` each as a protocol ``[bytes]``. Raises ``ValueError`` (bad data) or ``TypeError``
    (unusable type or object).
    """

def deserialize_vectors(data: Union[bytes, Sequence[bytes]], cql_type: str) -> numpy.ndarray:
    """Read ``vector<T, N>`` values (concatenated, or one ``bytes`` each) into a rows × N array."""

def encode(cql_type: str, value: Json, *, udts: Optional[Sequence[str]] = None) -> bytes:
    """The wire bytes of one value given in the JSON shapes of ``decode --format json``; ``bytes``
    only for a blob (a ``TypeError`` elsewhere, as in the driver); a ``set`` for a set, and a dict
    with keys other than ``str`` for a map, as the driver takes them."""

def decode(cql_type: str, data: BytesLike, *, udts: Optional[Sequence[str]] = None, strict: bool = False) -> Json:
    """One value's bytes as the JSON shapes of ``decode --format json``.

    Bytes Apache Cassandra refuses (a null or empty element in a list, set or map; the empty value of
    smallint, tinyint, date, time, duration or counter) are decoded all the same, with one
    ``RefusedValueWarning`` per finding (at most 100); ``strict=True`` raises ``ValueError`` instead."""

class RefusedValueWarning(UserWarning):
    """Wire-legal bytes that Apache Cassandra refuses, found by ``decode`` (worded as the command
    line's ``cqlwire: warning:`` lines: what, why, byte offset, path in the value)."""

def explain(cql_type: str, data: BytesLike, *, udts: Optional[Sequence[str]] = None) -> str:
    """An annotated dump of one value's bytes, one line per wire item; a last ``cqlwire: error: …`` line
    for malformed bytes, else a ``cqlwire: warning: …`` line per thing Apache Cassandra refuses."""

def lz4_compress(body: BytesLike) -> bytes:
    """A CQL v4 LZ4 body: 4-byte big-endian length, then the LZ4 block."""

def lz4_decompress(body: BytesLike, *, max_size: int = ...) -> bytes:
    """The payload of a CQL v4 LZ4 body; a declared length above ``max_size`` is refused."""

@final
class VectorCodec:
    """One vector type's codec for single values (what a driver binds per row)."""

    def __new__(cls, cql_type: str) -> "VectorCodec": ...
    @property
    def dimension(self) -> int: ...
    def serialize(self, value: numpy.typing.ArrayLike) -> bytes: ...
    def deserialize(self, data: bytes) -> list: ...

@final
class DriverSerializer:
    """The driver's ``VectorType.serialize`` of one parameterized class (set by ``cqlwire.driver``):
    ``codec``, else ``fallback(value, protocol_version)`` for what the codec refuses."""

    def __new__(cls, codec: VectorCodec, fallback: Any) -> "DriverSerializer": ...
    def serialize(self, value: Any, protocol_version: int) -> bytes: ...

PathLike = Union[str, "os.PathLike[str]"]
Hosts = Union[str, Sequence[str]]

class UsageError(ValueError):
    """What the command line refuses with exit code 2, for every job: an invalid option or
    keywords that do not go together, a bound passed, an output that is an input, a table, column
    or statement the server does not have or refuses, an input that cannot fill the statement.
    Nothing was written. ``LoadError`` is the same class."""

    kind: str
    """The reason, e.g. ``"invalid_option"``, ``"unknown_table"``, ``"mapping"``, ``"no_index"``."""
    report: None

class JobFailed(RuntimeError):
    """A run that could not start or finish, for every job (the command line's exit code 1): no
    connection, a refused login, a damaged input, a file that cannot be read or written, the
    cluster gone mid-run. ``LoadFailed`` is the same class."""

    kind: str
    """The reason, e.g. ``"connect"``, ``"authentication"``, ``"input"``, ``"output"``,
    ``"server_gone"``, ``"stopped"``."""
    report: Optional["LoadReport"]
    """A load's confirmed rows, with ``resume_from``; None when nothing started or for another job."""

LoadError = UsageError
"""The first name of :class:`UsageError`."""
LoadFailed = JobFailed
"""The first name of :class:`JobFailed`."""

@final
class LoadReport:
    """What a load did. Picklable (a Dask task may return it); the constructor takes the fields
    in the order below, as unpickling does."""

    def __new__(cls, written: int, rejected: int, retried: int, bytes: int, elapsed: float,
                resume_from: Optional[int], rejects: List[Tuple[int, str, str]]) -> "LoadReport": ...

    written: int
    """Rows acknowledged by the server (in a dry run: rows that bound)."""
    rejected: int
    """Rows rejected by the conversion or the server (every one is counted)."""
    retried: int
    """Requests retried."""
    bytes: int
    """Value bytes of the written rows."""
    elapsed: float
    """Wall time, in seconds."""
    resume_from: Optional[int]
    """None when every row was written or rejected; else the first row to load again (every row
    below it was written or rejected): ``rows=f"{resume_from}.."`` for a file, ``first_row`` and a
    slice for an array."""
    rejects: List[Tuple[int, str, str]]
    """The first 10,000 rejected rows as (row, key, reason); all of them go to ``rejects=``."""
    @property
    def rows_per_second(self) -> float: ...

def load(
    source: Any,
    *,
    hosts: Hosts,
    table: str,
    map: Union[Dict[str, Optional[str]], Sequence[Tuple[str, str]], str, None] = None,
    query: Optional[str] = None,
    row_number_column: Optional[str] = None,
    column: Optional[str] = None,
    input_format: Optional[str] = None,
    dataset: str = ...,  # "train"
    rows: Union[str, range, Tuple[int, Optional[int]], None] = None,
    shard: Union[str, Tuple[int, int], None] = None,
    ids: Optional[numpy.typing.ArrayLike] = None,
    first_row: int = 0,
    concurrency: Optional[int] = None,
    batch: Optional[int] = None,
    batch_bytes: Optional[int] = None,
    rejects: Optional[PathLike] = None,
    dry_run: bool = False,
    consistency: Optional[str] = None,
    timeout: int = 12,
    username: Optional[str] = None,
    password: Optional[str] = None,
    tls: bool = False,
    tls_ca: Optional[PathLike] = None,
    tls_cert: Optional[PathLike] = None,
    tls_key: Optional[PathLike] = None,
) -> LoadReport:
    """Load ``source`` into ``table`` (``KEYSPACE.TABLE``) through ``hosts`` on the engine of
    ``cqlwire load``, with the GIL released; Ctrl-C drains the run (rows in flight finish) and
    raises ``KeyboardInterrupt``.

    ``source``: a path of any input ``cqlwire load`` reads (Parquet, Arrow IPC, .npy,
    fvecs/ivecs/bvecs, fbin/ibin/u8bin/i8bin, HDF5); a 2-D NumPy array (its rows go to the table's
    only vector column; ``ids`` a key per row, an ``id`` int64 column, or ``row_number_column``);
    or a pyarrow Table or RecordBatch (columns map by name, the vector column as in a Parquet file;
    one without a list column loads its columns alone, e.g. into counters with ``query=``).
    The other keywords are the command's flags: ``map`` renames input columns (``{"emb":
    "embedding"}``, None or "" leaves a column out), ``rows``/``shard`` select rows of a file
    (``"START..END"``, ``"K/N"``), ``first_row`` numbers the rows of an array or table (its first
    row's number in the whole dataset: parts loaded separately get global row numbers),
    ``rejects`` appends rejected rows to a CSV file (row,key,error), ``batch`` (1 to 1024 rows)
    sends rows whose partitions share their replicas in UNLOGGED batches, each row still
    acknowledged or rejected alone, within ``batch_bytes`` (by default the server's
    ``batch_size_fail_threshold``). The password is ``password=``,
    else the ``CQLWIRE_PASSWORD`` environment variable. Rejected rows do not raise: see
    ``LoadReport.rejected`` and ``rejects``. Raises ``LoadError`` (usage) or ``LoadFailed``.
    """

UnloadFormat = Literal["parquet", "arrow", "npy", "fbin", "raw", "hex"]

@final
class UnloadReport:
    """What an unload into a file wrote (the fields of ``cqlwire unload``'s summary line).
    Picklable; the constructor takes the fields in the order below, as unpickling does."""

    def __new__(cls, rows: int, skipped: int, bytes: int, ranges: int, retried: int,
                elapsed: float, output: PathLike, ids: Optional[PathLike], format: str) -> "UnloadReport": ...

    rows: int
    """Rows written."""
    skipped: int
    """Rows of a vector format left out because their vector is null."""
    bytes: int
    """Value bytes read."""
    ranges: int
    """Token ranges read."""
    retried: int
    """Requests retried."""
    elapsed: float
    """Wall time of the scan, in seconds."""
    output: "os.PathLike[str]"
    """The file written (a ``pathlib.Path``)."""
    ids: Optional["os.PathLike[str]"]
    """The ids file written, with ``ids``."""
    format: UnloadFormat
    @property
    def rows_per_second(self) -> float:
        """Rows read per second of the scan (skipped rows included)."""

def unload(
    *,
    hosts: Hosts,
    table: str,
    columns: Optional[Sequence[str]] = None,
    where: Optional[str] = None,
    split: int = ...,  # 4
    concurrency: int = ...,  # 8
    page_rows: Optional[int] = None,
    output: Optional[PathLike] = None,
    format: Optional[UnloadFormat] = None,
    vector_column: Optional[str] = None,
    column: Optional[str] = None,
    ids: Optional[PathLike] = None,
    consistency: Optional[str] = None,
    timeout: int = 12,
    username: Optional[str] = None,
    password: Optional[str] = None,
    tls: bool = False,
    tls_ca: Optional[PathLike] = None,
    tls_cert: Optional[PathLike] = None,
    tls_key: Optional[PathLike] = None,
) -> Any:
    """Read ``table`` through ``hosts`` on the scan of ``cqlwire unload`` (by token range, each
    range from a replica, paged, retried), with the GIL released.

    Without ``output``: returns a ``pyarrow.Table`` held in memory (needs pyarrow), every column
    (or ``columns``, in that order) typed as the command's Parquet output (bigint → int64, text →
    string, timestamp → timestamp[ms, UTC], ``vector<float, N>`` → fixed_size_list<float32, N>,
    collections → list/map/struct), rows in token order; ``where`` a CQL condition (``ALLOW
    FILTERING``).

    With ``output``: the file ``cqlwire unload -o output`` writes, byte for byte, streamed (memory
    bounded whatever the table size) and written atomically: a temporary file beside it renamed
    into place at the end, so an error or Ctrl-C leaves no file (and an existing one as it was).
    ``format`` is ``parquet``/``arrow`` (every column, or ``columns``) or ``npy``/``fbin``/
    ``raw``/``hex`` (the ``vector_column`` (older spelling ``column``), else the table's only
    vector column; ``ids`` writes the partition keys of the same rows, ``.npy`` int64 or else
    CSV); by default from the output's extension, else parquet. Returns an ``UnloadReport``.

    Raises ``LoadError`` (an unknown table or column, a type without an Arrow form, keywords that
    do not go together) or ``LoadFailed`` (no connection, the cluster gone, a write error); Ctrl-C
    stops the scan and raises ``KeyboardInterrupt``.

    >>> report = cqlwire.unload(hosts="db1", table="ks.docs", output="vectors.npy",
    ...                         ids="ids.npy")  # doctest: +SKIP
    >>> report.rows, report.format  # doctest: +SKIP
    (100000, 'npy')
    """

@final
class SearchReport:
    """What a search measured (the fields of ``cqlwire search --format json``). Picklable; the
    constructor takes the fields in the order below, as unpickling does."""

    def __new__(cls, queries: int, k: int, recall: Optional[float], recall_min: Optional[float],
                qps: float, latency_ms: Dict[str, float], concurrency: int, errors: int,
                elapsed: float, warnings: List[Tuple[str, int]], other_warnings: int,
                index_wait: Optional[float], statement: str,
                results: List[Tuple[int, float, List[Union[int, str]], Optional[float],
                                    Optional[str]]]) -> "SearchReport": ...

    queries: int
    """Queries measured (warm-up excluded), answered or not."""
    k: int
    recall: Optional[float]
    """Mean recall@k of the answered queries, when there is ground truth."""
    recall_min: Optional[float]
    qps: float
    latency_ms: Dict[str, float]
    """Latency percentiles of the answered queries: ``p50``, ``p95``, ``p99``, ``max``."""
    concurrency: int
    errors: int
    elapsed: float
    """Wall time of the measured queries, in seconds."""
    warnings: List[Tuple[str, int]]
    """The distinct warnings the server attached to answers, in the order first seen: (its
    text, how many measured answers carried it); e.g. that it lowered the consistency level. At
    most 16 texts, each cut to 1,000 characters."""
    other_warnings: int
    """Warnings whose text was not among the 16 kept."""
    index_wait: Optional[float]
    """Seconds until the index answered, with ``wait_for_index``."""
    statement: str
    results: List[Tuple[int, float, List[Union[int, str]], Optional[float], Optional[str]]]
    """Each query: (row in the queries, latency in ms, keys nearest first (ints for integer
    keys, else CQL literals), recall@k or None, error or None)."""

def search(
    queries: Any,
    *,
    hosts: Hosts,
    table: str,
    vector_column: Optional[str] = None,
    column: Optional[str] = None,
    key: Optional[str] = None,
    k: int = ...,  # 10
    dataset: str = ...,  # "test"
    input_format: Optional[str] = None,
    input_column: Optional[str] = None,
    query_rows: Union[str, range, Tuple[int, Optional[int]], None] = None,
    ground_truth: Union[PathLike, numpy.typing.ArrayLike, None] = None,
    exact: Optional[PathLike] = None,
    where: Optional[str] = None,
    concurrency: int = ...,  # 1
    warmup: int = ...,  # 0
    wait_for_index: Optional[int] = None,
    results: Optional[PathLike] = None,
    consistency: Optional[str] = None,
    timeout: int = 12,
    username: Optional[str] = None,
    password: Optional[str] = None,
    tls: bool = False,
    tls_ca: Optional[PathLike] = None,
    tls_cert: Optional[PathLike] = None,
    tls_key: Optional[PathLike] = None,
) -> SearchReport:
    """Run ANN queries on ``table`` on the engine of ``cqlwire search``, with the GIL released:
    each query vector bound as bytes to ``SELECT key FROM table [WHERE where] ORDER BY
    vector_column ANN OF ? LIMIT k`` (``column=`` is the older spelling of ``vector_column=``).
    ``queries``: a path (any input ``cqlwire search`` reads; HDF5: ``dataset``), a 2-D NumPy array
    or a pyarrow Table (``input_column`` its vector column). ``query_rows`` runs
    rows START..END of a query file only (``--queries``: ``"START..END"``, ``range(START, END)``
    or ``(START, END)``; the ground truth's rows follow the query numbers).

    Ground truth, as the command chooses it: ``ground_truth``, a 2-D integer array (one row of ids
    per query) or a file (HDF5: its ``neighbors`` dataset; big-ann-benchmarks binary, ``.ivecs``,
    integer ``.npy``); else ``exact``, a training file searched by brute force with the index's
    similarity function (HDF5: its ``train`` dataset); else an HDF5 query file's own
    ``neighbors``; else none (``recall`` is None). Ids are training row numbers. ``results``
    writes one CSV line per query (``query,latency_ms,recall,keys,error``, as ``--results``),
    atomically. ``wait_for_index`` waits up to that many seconds for a new index to answer.
    ``consistency`` is ``LOCAL_ONE`` by default, the level Cassandra runs ANN queries at (it lowers
    any other, with a warning on every answer: ``SearchReport.warnings``).
    Raises ``UsageError`` (no vector index, a dimension the column does not have, keywords that do
    not go together, a results file that is an input, a bound passed) or ``JobFailed`` (a query or
    ground truth file that cannot be read, a results file that cannot be created, no connection).

    >>> report = cqlwire.search("glove-100-angular.hdf5", hosts="db1", table="ks.glove", k=10,
    ...                         query_rows=(0, 1000))  # doctest: +SKIP
    >>> report.recall  # doctest: +SKIP
    0.9731
    """

def bench(
    folder: Optional[PathLike] = None,
    *,
    hosts: Hosts,
    table: str,
    train: Optional[PathLike] = None,
    test: Optional[PathLike] = None,
    ground_truth: Optional[PathLike] = None,
    stages: Optional[Sequence[str]] = None,
    drop: bool = False,
    metric: Optional[str] = None,
    index_options: Optional[Mapping[str, str]] = None,
    k: int = ...,  # 100
    concurrency: Optional[Sequence[int]] = None,  # [1, 5, 10, 20, 30, 40, 60, 80]; streaming: [5, 10]
    duration: Optional[int] = None,  # 30
    streaming: bool = False,
    insert_rate: Optional[int] = None,  # 500
    search_stages: Optional[Sequence[int]] = None,  # [50, 80]
    read_duration: Optional[int] = None,  # 30
    optimize_after_write: bool = True,
    index_wait: int = ...,  # 3600
    schema_timeout: int = ...,  # 600
    rounds: int = ...,  # 1
    rounds_load: int = ...,  # 1
    optimize_command: Optional[str] = None,
    filter: Optional[str] = None,
    index_first: bool = False,
    sweep: Optional[Mapping[str, Sequence[Union[int, str]]]] = None,
    output: Optional[PathLike] = None,
    db: str = ...,  # "Cassandra"
    plot: Optional[PathLike] = None,
    keep_failed: bool = False,
    label: Optional[str] = None,
    results_dir: Optional[PathLike] = None,
    title: Optional[str] = None,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    consistency: Optional[str] = None,
    timeout: int = 12,
    username: Optional[str] = None,
    password: Optional[str] = None,
    tls: bool = False,
    tls_ca: Optional[PathLike] = None,
    tls_cert: Optional[PathLike] = None,
    tls_key: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """Run VectorDBBench's performance case on ``table`` on the engine of ``cqlwire bench``, with
    the GIL released: the dataset ``folder`` (``train.parquet`` or ``shuffle_train-NN-of-MM.parquet``,
    ``test.parquet``, ``neighbors.parquet``) or an ann-benchmarks HDF5 file as ``folder``
    (datasets ``train``, ``test``, ``neighbors``), or the files ``train`` (any format ``load`` reads;
    HDF5: dataset ``train``), ``test`` (any format ``search`` reads; HDF5: ``test``) and
    ``ground_truth`` (ivecs, ``.npy``, Parquet ``neighbors_id``, big-ann-benchmarks), the ids
    the training file's ``id`` column or else its row numbers, through the ``stages`` (VectorDBBench's names:
    ``drop_old``, ``load``, ``search_serial``, ``search_concurrent``; all by default). ``drop``
    drops an existing table (else it is refused); ``metric`` is the index's similarity function
    (by default an HDF5 training file's ``distance`` attribute, ``angular`` being cosine, else
    cosine; one against that attribute is refused) and
    ``index_options`` its other options; each ``concurrency`` level runs ``duration`` seconds.
    ``filter`` runs a filtered case as VectorDBBench defines it: ``"int:RATE"`` (``id >=
    int(rows × RATE)``, on a copy of the id in ``id_int`` with its own SAI index) or
    ``"label:SHARE"`` (``labels = 'label_{P}p'`` from ``scalar_labels.parquet``, with an SAI index
    on ``labels``), scored against the folder's ground truth of that filter. ``index_first``
    creates the index before the load, as VectorDBBench does: the writes the server refuses
    (CASSANDRA-21644 on 5.0.9) are counted in ``retried`` (sent again) and ``rejected`` (rows
    not stored), described in ``rejected_reason``, and the case goes on. ``output`` writes VectorDBBench's result file (``db`` names its ``DB`` member), ``plot`` the
    QPS/p99 chart as SVG; neither may name a dataset file or the other, and both are written
    after the run, only when no query failed (``keep_failed`` writes them then, the result's label
    VectorDBBench's ``FAILED``). ``label`` names the run (VectorDBBench's
    ``task_label`` and ``db_label``); ``results_dir`` also writes the result file into that folder as
    VectorDBBench names its own (``DIR/<db>/result_<date>_<label>_<db>.json``).
    ``progress`` is called with a dict as each stage starts (``{"event": "started", "stage":
    "load", "units": 300}``), each concurrency level starts (``"level"``, ``"concurrency"``) and
    each stage ends (``"finished"``, ``"seconds"``), so a notebook is not silent for minutes.
    ``title`` replaces the chart's title (by default the dataset, rows × dimension, k, the
    filter, the similarity function, the label and the server; recall and NDCG under it).
    ``rounds`` runs the search stages that many times on the loaded table: the metrics are the
    medians, every round and the min/median/max of recall, NDCG and qps in ``spread``;
    ``rounds_load`` runs the whole case that many times, the table dropped and loaded each time
    (the durations the medians, each load's in ``loads``).
    ``optimize_command`` is a shell command the optimize stage runs first, inside its time (e.g.
    ``nodetool flush ks t && nodetool compact ks t``).
    ``streaming`` runs VectorDBBench's streaming case (``StreamingCustomDataset``, case 201)
    instead: the training set inserted at ``insert_rate`` rows per second (a multiple of 100;
    500), at each of ``search_stages`` (percentages of the rows inserted; ``[50, 80]``) a serial
    pass and the ``concurrency`` levels (``[5, 10]``, each the time VectorDBBench gives it before
    the next stage, skipped under 10 s), then the same after the last row (stage 100) and after
    the optimize stage (110, unless ``optimize_after_write`` is false), each level
    ``read_duration`` seconds (30). ``index_first`` makes the index before the first row; else it
    is made at the first stage. The dict then holds the ``st_*`` lists and ``streaming``: the
    rate asked and achieved, the largest backlog, the writes retried and the rows rejected
    (which raise ``LoadFailed`` with the dict in its ``summary``).
    ``sweep`` maps keys (``similarity_function``, ``maximum_node_connections``,
    ``construction_beam_width``, ``optimize_for``, ``k``) to their values: a case runs per
    combination, the table loaded once and an index made for each (combinations that differ only
    in ``k`` share one), the result file holds a case each, ``plot`` draws recall against QPS
    with the Pareto frontier, and the dict returned is ``{"cases": [...]}``, each case's dict
    with its values in ``sweep``; an error after some combinations ran keeps their results and
    carries that dict in its ``summary``.
    ``schema_timeout`` is how long a table or index statement may take. ``k`` is 1 to 1000, each ``concurrency`` level 1 to 100,000 (one
    level at least), ``duration`` and ``index_wait`` 1 to 86,400 seconds, as the command line's
    flags.

    Returns the result file's ``metrics`` (``insert_duration``, ``optimize_duration``,
    ``load_duration``, ``qps``, ``serial_latency_p99``, ``serial_latency_p95``, ``recall``,
    ``ndcg``, ``conc_*_list``, …) plus ``server``, ``rows``, ``stages``, ``index``, ``filter``
    (a filtered case's condition), ``serial_errors`` and ``conc_errors_list``, as a dict. Raises ``LoadError`` (an existing table
    without ``drop``, a missing keyspace, options that cannot work, an output that cannot be) or
    ``LoadFailed`` (a dataset file that cannot be read; queries that failed, the dict in its
    ``summary``); Ctrl-C
    stops the current stage and raises ``KeyboardInterrupt``.

    >>> cqlwire.bench("fixtures/bench/folder", hosts="127.0.0.1", table="ks.bench", k=10,
    ...               concurrency=[1, 4], duration=5)["recall"]  # doctest: +SKIP
    1.0
    """
