"""v5 segments through a codec of the Python driver's `cassandra.segment`: the bytes it writes of a
payload, and the payloads it reads back. Shared by the tests and the child environment without
python-lz4 that test_driver_without_lz4.py runs."""
from io import BytesIO


def encoded(codec, payload):
    """The segments `codec` writes of `payload`."""
    out = BytesIO()
    codec.encode(out, payload)
    return out.getvalue()


def decoded(codec, data):
    """The payloads of the segments in `data`, joined."""
    buffer, parts = BytesIO(data), []
    while buffer.tell() < len(data):
        header = codec.decode_header(buffer)
        parts.append(codec.decode(buffer, header).payload)
    return b"".join(parts)
