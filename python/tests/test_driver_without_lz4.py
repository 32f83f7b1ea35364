"""cqlwire.driver.install() where python-lz4 is not installed: the Python driver then has no
protocol v5 LZ4 segment codec of its own (`cassandra.connection.segment_codec_lz4` is None), and the
hook must provide one, byte-identical to the codec the driver builds on python-lz4.

The environment without python-lz4 is a real one: a virtual environment made here whose
site-packages links every package of this interpreter's (the driver, cqlwire, NumPy, ...) except
`lz4`, so the driver's own `import lz4` fails at import as it does on a machine that never installed
it. Nothing is patched or hidden inside the process under test. The segments it writes are compared,
byte for byte, with those of the driver's codec on python-lz4 in this process, and each side reads
the other's. With CQLWIRE_TEST_CASSANDRA naming a server (fixtures/load/live-tests.sh), the same
environment connects to it over protocol v5 with LZ4 and reads back what it wrote."""
import json
import os
import pathlib
import random
import subprocess
import sys
import venv
from io import BytesIO

import pytest
from cassandra.connection import lz4_compress as driver_compress
from cassandra.connection import lz4_decompress as driver_decompress
from cassandra.segment import Segment, SegmentCodec
from conftest import FIXTURES
from segments import decoded, encoded

import cqlwire

SERVER = os.environ.get("CQLWIRE_TEST_CASSANDRA")
live = pytest.mark.skipif(not SERVER, reason="CQLWIRE_TEST_CASSANDRA names no server")


def payloads():
    """Segment payloads: compressible text of several sizes, bytes LZ4 cannot shrink (sent
    uncompressed), nothing, and a message longer than one segment holds (split in several)."""
    text = (FIXTURES / "lz4" / "payloads" / "text-65536.bin").read_bytes()
    noise = random.Random(45).randbytes(4000)
    long = (text * 3)[: 2 * Segment.MAX_PAYLOAD_LENGTH + 1000]
    return [text[:1], text[:100], text[:8192], text, noise, b"", long]


# Runs in the environment without python-lz4: reports what the driver offers before install(),
# the segments written after it for each payload (hex), the payloads read from the segments the
# driver wrote on python-lz4 (given on stdin), and what uninstall() leaves.
CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from segments import decoded, encoded

report = {}
try:
    import lz4  # noqa: F401
    report["lz4"] = "importable"
except ImportError:
    report["lz4"] = "missing"
from cassandra import connection
import cqlwire, cqlwire.driver

def state():
    codec = connection.segment_codec_lz4
    return {
        "codec": None if codec is None else type(codec).__name__,
        "cqlwire_functions": codec is not None and codec.compressor is cqlwire.lz4_compress
            and codec.decompressor is cqlwire.lz4_decompress,
        "compressions": list(connection.locally_supported_compressions),
    }

given = json.load(sys.stdin)
report["before"] = state()
cqlwire.driver.install()
report["installed"] = state()
codec = connection.segment_codec_lz4
report["written"] = [encoded(codec, bytes.fromhex(p)).hex() for p in given["payloads"]]
report["read"] = [decoded(codec, bytes.fromhex(s)).hex() for s in given["segments"]]
cqlwire.driver.uninstall()
report["uninstalled"] = state()
json.dump(report, sys.stdout)
"""


@pytest.fixture(scope="module")
def without_lz4(tmp_path_factory):
    """The Python of a new virtual environment holding this interpreter's packages but lz4."""
    import cassandra

    packages = pathlib.Path(cassandra.__file__).resolve().parents[1]
    root = tmp_path_factory.mktemp("venv-without-lz4")
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    python = root / "bin" / "python"
    target = pathlib.Path(subprocess.run(
        [str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip())
    for entry in packages.iterdir():
        name = entry.name.lower()
        if name == "lz4" or name.startswith("lz4-") or (target / entry.name).exists():
            continue
        (target / entry.name).symlink_to(entry)
    return python


def run_child(python, script, stdin="", env=None):
    # The script's first argument is this folder, for segments.py.
    done = subprocess.run([str(python), "-I", "-c", script, str(pathlib.Path(__file__).parent)],
                          input=stdin, capture_output=True,
                          text=True, env=env, cwd=str(python.parents[1]), timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def child_report(without_lz4):
    driver = SegmentCodec(driver_compress, driver_decompress)
    given = {"payloads": [p.hex() for p in payloads()],
             "segments": [encoded(driver, p).hex() for p in payloads()]}
    return json.loads(run_child(without_lz4, CHILD, json.dumps(given)))


def test_the_environment_lacks_python_lz4_and_the_driver_its_v5_codec(child_report):
    assert child_report["lz4"] == "missing"
    before = child_report["before"]
    assert before["codec"] is None
    assert "lz4" not in before["compressions"]


def test_install_provides_the_v5_segment_codec_on_cqlwire_lz4(child_report):
    installed = child_report["installed"]
    assert installed["codec"] == "SegmentCodec"
    assert installed["cqlwire_functions"]
    # First, as the driver ranks it when python-lz4 is installed (v5 takes LZ4 only).
    assert installed["compressions"][0] == "lz4"
    assert sorted(installed["compressions"]) == sorted(child_report["before"]["compressions"] + ["lz4"])


def test_segments_are_the_bytes_of_the_drivers_codec_on_python_lz4(child_report):
    driver = SegmentCodec(driver_compress, driver_decompress)
    for payload, written in zip(payloads(), child_report["written"]):
        written = bytes.fromhex(written)
        assert written == encoded(driver, payload), "payload of %d bytes" % len(payload)
        assert decoded(driver, written) == payload


def test_segments_of_the_drivers_codec_on_python_lz4_are_read(child_report):
    assert [bytes.fromhex(p) for p in child_report["read"]] == payloads()


def test_the_segments_compressed_and_those_sent_as_they_are():
    """The payload cases cover both kinds of segment (the header's uncompressed length is 0 for a
    payload LZ4 cannot shrink), and the codec on cqlwire's functions is the driver's here too."""
    driver = SegmentCodec(driver_compress, driver_decompress)
    ours = SegmentCodec(cqlwire.lz4_compress, cqlwire.lz4_decompress)
    kinds = set()
    for payload in payloads():
        data = encoded(driver, payload)
        assert encoded(ours, payload) == data
        header = driver.decode_header(BytesIO(data))
        kinds.add(header.uncompressed_payload_length > 0)
    assert kinds == {True, False}


def test_uninstall_leaves_the_driver_as_it_was(child_report):
    assert child_report["uninstalled"] == child_report["before"]


# Connects over protocol v5 with install() and LZ4, writes vectors (one statement longer than a
# segment holds) and reads them back; prints what the connection negotiated.
LIVE = r"""
import json, os
import numpy as np
import cqlwire.driver
from cassandra import connection
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster

cqlwire.driver.install()
host, _, port = os.environ["CQLWIRE_TEST_CASSANDRA"].rpartition(":")
user = os.environ.get("CQLWIRE_TEST_USER")
auth = PlainTextAuthProvider(user, os.environ["CQLWIRE_TEST_PASSWORD"]) if user else None
cluster = Cluster([host], port=int(port), auth_provider=auth, protocol_version=5, compression="lz4")
cql = cluster.connect()
control = cluster.control_connection._connection
cql.execute("CREATE KEYSPACE IF NOT EXISTS cqlwire_python WITH replication = "
                "{'class': 'SimpleStrategy', 'replication_factor': 1}")
cql.execute("DROP TABLE IF EXISTS cqlwire_python.hook_without_lz4")
cql.execute("CREATE TABLE cqlwire_python.hook_without_lz4 (id int PRIMARY KEY, v vector<float, 768>, "
                "note text)")
insert = cql.prepare("INSERT INTO cqlwire_python.hook_without_lz4 (id, v, note) VALUES (?, ?, ?)")
rows = np.random.default_rng(45).standard_normal((200, 768), dtype=np.float32)
notes = ["note %d " % i * (1 + i) for i in range(200)]
notes[7] = "x" * 300000  # longer than a v5 segment: several segments
for i in range(200):
    cql.execute(insert, (i, rows[i], notes[i]))
back = {r.id: (np.asarray(r.v, dtype=np.float32), r.note)
        for r in cql.execute("SELECT id, v, note FROM cqlwire_python.hook_without_lz4")}
same = len(back) == 200 and all(back[i][0].tobytes() == rows[i].tobytes() and back[i][1] == notes[i]
                               for i in range(200))
report = {
    "protocol": control.protocol_version,
    "compression": control._compression_type,
    "segment_codec_is_the_hooks": control._segment_codec is connection.segment_codec_lz4,
    "read_back_equal": same,
}
cql.execute("DROP TABLE cqlwire_python.hook_without_lz4")
cluster.shutdown()
print(json.dumps(report))
"""


@live
def test_a_v5_lz4_connection_to_a_real_server_without_python_lz4(without_lz4, child_report):
    assert child_report["lz4"] == "missing"
    report = json.loads(run_child(without_lz4, LIVE, env=dict(os.environ)).splitlines()[-1])
    assert report == {"protocol": 5, "compression": "lz4", "segment_codec_is_the_hooks": True,
                      "read_back_equal": True}
