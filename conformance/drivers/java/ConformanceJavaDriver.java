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
 * "reencode_error", and for a case with a value "value_encoded" / "value_error": the driver's bytes for the
 * Java value built from its JSON form.
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

    /** A value the driver's Java types cannot hold. */
    static final class Unsupported extends Exception {
        Unsupported(String why) {
            super("unsupported: " + why);
        }
    }

    static double doubleValue(JsonNode node, boolean single) throws Unsupported {
        if (!node.isTextual()) {
            return node.asDouble();
        }
        String text = node.asText();
        if (text.startsWith("NaN(0x")) {
            long bits = Long.parseUnsignedLong(text.substring(6, text.length() - 1), 16);
            if (single) {
                throw new Unsupported("a float NaN with other bits goes through a double");
            }
            return Double.longBitsToDouble(bits);
        }
        return Double.parseDouble(text);
    }

    /** The Java value the driver takes for a corpus JSON value (its documented type mapping). */
    static Object javaValue(JsonNode tree, DataType type, JsonNode value) throws Exception {
        if (value == null || value.isNull()) {
            return null;
        }
        if (value.isObject() && value.has("$empty")) {
            throw new Unsupported("the driver has no way to write the empty value");
        }
        if (tree.isTextual()) {
            String text = value.asText();
            switch (tree.asText()) {
                case "tinyint": return (byte) value.asInt();
                case "smallint": return (short) value.asInt();
                case "int": return value.asInt();
                case "bigint": case "counter": return value.asLong();
                case "varint": return new java.math.BigInteger(text);
                case "decimal": return new java.math.BigDecimal(text);
                case "float": {
                    if (value.isTextual() && text.startsWith("NaN(0x")) {
                        return Float.intBitsToFloat((int) Long.parseLong(text.substring(6, text.length() - 1), 16));
                    }
                    return (float) doubleValue(value, false);
                }
                case "double": return doubleValue(value, false);
                case "boolean": return value.asBoolean();
                case "blob": return bytes(text.substring(2));
                case "uuid": case "timeuuid": return java.util.UUID.fromString(text);
                case "inet": return java.net.InetAddress.getByName(text);
                case "timestamp":
                    return value.isNumber() ? java.time.Instant.ofEpochMilli(value.asLong())
                            : java.time.Instant.parse(text.replace(' ', 'T'));
                case "date":
                    return value.isNumber() ? java.time.LocalDate.ofEpochDay(value.asLong() - (1L << 31))
                            : java.time.LocalDate.parse(text);
                case "time": return java.time.LocalTime.parse(text);
                case "duration": return com.datastax.oss.driver.api.core.data.CqlDuration.from(text);
                default: return text;
            }
        }
        String kind = tree.get(0).asText();
        switch (kind) {
            case "list": case "set": case "vector": {
                DataType element = kind.equals("list") ? ((com.datastax.oss.driver.api.core.type.ListType) type).getElementType()
                        : kind.equals("set") ? ((com.datastax.oss.driver.api.core.type.SetType) type).getElementType()
                        : ((com.datastax.oss.driver.api.core.type.VectorType) type).getElementType();
                java.util.Collection<Object> out = kind.equals("set") ? new java.util.LinkedHashSet<>() : new ArrayList<>();
                for (JsonNode x : value) {
                    out.add(javaValue(tree.get(1), element, x));
                }
                if (kind.equals("vector")) {
                    @SuppressWarnings("unchecked")
                    List<Number> numbers = (List<Number>) (List<?>) out;
                    return com.datastax.oss.driver.api.core.data.CqlVector.newInstance(numbers);
                }
                return out;
            }
            case "map": {
                com.datastax.oss.driver.api.core.type.MapType map = (com.datastax.oss.driver.api.core.type.MapType) type;
                Map<Object, Object> out = new java.util.LinkedHashMap<>();
                for (JsonNode pair : value) {
                    out.put(javaValue(tree.get(1), map.getKeyType(), pair.get(0)),
                            javaValue(tree.get(2), map.getValueType(), pair.get(1)));
                }
                return out;
            }
            case "tuple": {
                com.datastax.oss.driver.api.core.type.TupleType tuple = (com.datastax.oss.driver.api.core.type.TupleType) type;
                Object[] fields = new Object[tuple.getComponentTypes().size()];
                for (int i = 0; i < fields.length; i++) {
                    fields[i] = javaValue(tree.get(1).get(i), tuple.getComponentTypes().get(i), value.get(i));
                }
                return tuple.newValue(fields);
            }
            default: {
                com.datastax.oss.driver.api.core.type.UserDefinedType udt =
                        (com.datastax.oss.driver.api.core.type.UserDefinedType) type;
                Object[] fields = new Object[udt.getFieldTypes().size()];
                for (int i = 0; i < fields.length; i++) {
                    JsonNode field = tree.get(2).get(i);
                    fields[i] = javaValue(field.get(1), udt.getFieldTypes().get(i), value.get(field.get(0).asText()));
                }
                return udt.newValue(fields);
            }
        }
    }

    /** Decodes and re-encodes one case, filling its raw line. */
    static void run(JsonNode c, ObjectNode line) {
        String why = unsupported(c.get("type_tree"));
        if (why != null) {
            line.put("unsupported", why);
            return;
        }
        TypeCodec<Object> codec;
        DataType dataType;
        Object decoded;
        try {
            dataType = type(c.get("type_tree"));
            codec = CodecRegistry.DEFAULT.codecFor(dataType);
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
        if (c.has("value")) {
            try {
                ByteBuffer encoded = codec.encode(javaValue(c.get("type_tree"), dataType, c.get("value")), ProtocolVersion.V4);
                if (encoded == null) {
                    line.put("value_error", "encoded as null (no value)");
                } else {
                    line.put("value_encoded", hex(encoded));
                }
            } catch (Unsupported error) {
                line.put("value_error", error.getMessage());
            } catch (Throwable error) {
                line.put("value_error", message(error));
            }
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
