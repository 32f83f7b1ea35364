import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.type.DataType;
import com.datastax.oss.driver.api.core.type.DataTypes;
import com.datastax.oss.driver.api.core.type.codec.TypeCodec;
import com.datastax.oss.driver.api.core.type.codec.registry.CodecRegistry;
import com.datastax.oss.driver.internal.core.type.UserDefinedTypeBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Java driver 4.17's offline codec (CodecRegistry.DEFAULT, TypeCodec.decode/encode, protocol v4) on the
 * conformance corpus: reads conformance/cases.jsonl on standard input and writes, per case, the raw line that
 * conformance/drivers/judge.py takes: "unsupported", or "decode_error", or "decoded" and "reencoded" /
 * "reencode_error".
 *
 * <pre>java -cp CLASSES:LIB/* ConformanceJavaDriver &lt; cases.jsonl</pre>
 */
public final class ConformanceJavaDriver {
    private static final Map<String, DataType> NATIVES = Map.ofEntries(
            Map.entry("ascii", DataTypes.ASCII), Map.entry("bigint", DataTypes.BIGINT),
            Map.entry("blob", DataTypes.BLOB), Map.entry("boolean", DataTypes.BOOLEAN),
            Map.entry("counter", DataTypes.COUNTER), Map.entry("date", DataTypes.DATE),
            Map.entry("decimal", DataTypes.DECIMAL), Map.entry("double", DataTypes.DOUBLE),
            Map.entry("duration", DataTypes.DURATION), Map.entry("float", DataTypes.FLOAT),
            Map.entry("inet", DataTypes.INET), Map.entry("int", DataTypes.INT),
            Map.entry("smallint", DataTypes.SMALLINT), Map.entry("text", DataTypes.TEXT),
            Map.entry("varchar", DataTypes.TEXT), Map.entry("time", DataTypes.TIME),
            Map.entry("timestamp", DataTypes.TIMESTAMP), Map.entry("timeuuid", DataTypes.TIMEUUID),
            Map.entry("tinyint", DataTypes.TINYINT), Map.entry("uuid", DataTypes.UUID),
            Map.entry("varint", DataTypes.VARINT));

    /** The element types a 4.17 CqlVector can hold (it is a CqlVector&lt;T extends Number&gt;). */
    private static final java.util.Set<String> NUMBERS =
            java.util.Set.of("tinyint", "smallint", "int", "bigint", "counter", "varint", "float", "double", "decimal");

    private ConformanceJavaDriver() {}

    /** Why the driver cannot express a type, or null. */
    static String unsupported(JsonNode tree) {
        if (tree.isTextual()) {
            return null;
        }
        String kind = tree.get(0).asText();
        if (kind.equals("vector") && !(tree.get(1).isTextual() && NUMBERS.contains(tree.get(1).asText()))) {
            return "CqlVector holds numbers only in 4.17: no vector<" + tree.get(1) + ", N>";
        }
        for (JsonNode child : tree) {
            if (child.isArray() || child.isTextual() && !child.asText().equals(kind)) {
                String why = child.isTextual() ? null : unsupported(child);
                if (why != null) {
                    return why;
                }
            }
        }
        return null;
    }

    static DataType type(JsonNode tree) {
        if (tree.isTextual()) {
            return NATIVES.get(tree.asText());
        }
        String kind = tree.get(0).asText();
        switch (kind) {
            case "list":
                return DataTypes.frozenListOf(type(tree.get(1)));
            case "set":
                return DataTypes.frozenSetOf(type(tree.get(1)));
            case "map":
                return DataTypes.frozenMapOf(type(tree.get(1)), type(tree.get(2)));
            case "tuple": {
                List<DataType> components = new ArrayList<>();
                for (JsonNode component : tree.get(1)) {
                    components.add(type(component));
                }
                return DataTypes.tupleOf(components.toArray(new DataType[0]));
            }
            case "udt": {
                UserDefinedTypeBuilder builder = new UserDefinedTypeBuilder(
                        CqlIdentifier.fromInternal("conformance"), CqlIdentifier.fromInternal(tree.get(1).asText()));
                for (JsonNode field : tree.get(2)) {
                    builder.withField(CqlIdentifier.fromInternal(field.get(0).asText()), type(field.get(1)));
                }
                return builder.frozen().build();
            }
            case "vector":
                return DataTypes.vectorOf(type(tree.get(1)), tree.get(2).asInt());
            default:
                throw new IllegalArgumentException("unknown type " + kind);
        }
    }

    static String hex(ByteBuffer buffer) {
        StringBuilder out = new StringBuilder();
        ByteBuffer b = buffer.duplicate();
        while (b.hasRemaining()) {
            out.append(String.format("%02x", b.get() & 0xff));
        }
        return out.toString();
    }

    static ByteBuffer bytes(String hex) {
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return ByteBuffer.wrap(out);
    }

    static String message(Throwable error) {
        String text = error.getClass().getSimpleName() + ": " + error.getMessage();
        return text.length() > 300 ? text.substring(0, 300) : text;
    }

    /** Decodes and re-encodes one case, filling its raw line. */
    static void run(JsonNode c, ObjectNode line) {
        String why = unsupported(c.get("type_tree"));
        if (why != null) {
            line.put("unsupported", why);
            return;
        }
        TypeCodec<Object> codec;
        Object decoded;
        try {
            codec = CodecRegistry.DEFAULT.codecFor(type(c.get("type_tree")));
        } catch (Throwable error) {
            line.put("unsupported", message(error));
            return;
        }
        try {
            decoded = codec.decode(bytes(c.get("hex").asText()), ProtocolVersion.V4);
        } catch (Throwable error) {
            line.put("decode_error", message(error));
            return;
        }
        String shown;
        try {
            shown = String.valueOf(decoded);
        } catch (Throwable error) {
            shown = "(printing it failed: " + message(error) + ")";
        }
        line.put("decoded", shown.length() > 200 ? shown.substring(0, 200) : shown);
        try {
            ByteBuffer encoded = codec.encode(decoded, ProtocolVersion.V4);
            if (encoded == null) {
                line.put("reencode_error", "encoded as null (no value)");
            } else {
                line.put("reencoded", hex(encoded));
            }
        } catch (Throwable error) {
            line.put("reencode_error", message(error));
        }
    }

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String version = "java-driver-core " + com.datastax.oss.driver.api.core.session.Session.OSS_DRIVER_COORDINATES.getVersion();
        for (String text = in.readLine(); text != null; text = in.readLine()) {
            JsonNode c = json.readTree(text);
            ObjectNode line = json.createObjectNode();
            line.put("case", c.get("id").asText());
            line.put("driver", version);
            run(c, line);
            out.println(json.writeValueAsString(line));
        }
        out.flush();
    }
}
