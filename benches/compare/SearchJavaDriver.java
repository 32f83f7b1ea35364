import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.data.CqlVector;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Java driver 4.x as a peer of `cqlwire search` (compiled and run by search.py): reads a 2-D
 * little-endian float32 .npy of query vectors, binds each as a CqlVector to a prepared
 * {@code SELECT id FROM ks.t ORDER BY emb ANN OF ? LIMIT k} and sends it with executeAsync, at most
 * CONCURRENCY queries in flight (a semaphore).
 *
 * <pre>java -cp CLASSES:LIB/* SearchJavaDriver QUERIES.npy HOST PORT KS.TABLE K CONCURRENCY ANSWERS</pre>
 *
 * Writes the ids of each answer (one line per query, in query order) to ANSWERS; prints one line:
 * queries, seconds, queries per second, latency percentiles (nearest rank) and the process CPU
 * seconds of the queries alone (the JVM's start, the reading and connecting before the clock excluded).
 */
public final class SearchJavaDriver {
    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: SearchJavaDriver QUERIES.npy HOST PORT KS.TABLE K CONCURRENCY ANSWERS");
            System.exit(2);
        }
        int concurrency = Integer.parseInt(args[5]);
        MappedByteBuffer npy;
        try (FileChannel channel = FileChannel.open(Paths.get(args[0]))) {
            npy = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
        }
        npy.order(ByteOrder.LITTLE_ENDIAN);
        int major = npy.get(6);
        int headerLength = major == 1 ? Short.toUnsignedInt(npy.getShort(8)) : npy.getInt(8);
        int dataStart = (major == 1 ? 10 : 12) + headerLength;
        byte[] headerBytes = new byte[headerLength];
        npy.get(major == 1 ? 10 : 12, headerBytes);
        String header = new String(headerBytes, StandardCharsets.ISO_8859_1);
        Matcher shape = Pattern.compile("'shape': \\((\\d+), (\\d+)\\)").matcher(header);
        if (!header.contains("'descr': '<f4'") || header.contains("'fortran_order': True") || !shape.find()) {
            throw new IllegalArgumentException("not a C-order 2-D <f4 .npy: " + header);
        }
        int rows = Integer.parseInt(shape.group(1));
        int dimension = Integer.parseInt(shape.group(2));
        List<CqlVector<Float>> queries = new ArrayList<>(rows);
        for (int row = 0; row < rows; row++) {
            List<Float> floats = new ArrayList<>(dimension);
            int offset = dataStart + row * dimension * 4;
            for (int i = 0; i < dimension; i++) {
                floats.add(npy.getFloat(offset + 4 * i));
            }
            queries.add(CqlVector.newInstance(floats));
        }

        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10))
                .build();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try (CqlSession session = CqlSession.builder()
                .addContactPoint(new InetSocketAddress(args[1], Integer.parseInt(args[2])))
                .withLocalDatacenter("datacenter1")
                .withConfigLoader(config)
                .build()) {
            PreparedStatement select = session.prepare(
                    "SELECT id FROM " + args[3] + " ORDER BY emb ANN OF ? LIMIT " + Integer.parseInt(args[4]));
            Semaphore permits = new Semaphore(concurrency);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long[] latencies = new long[rows];
            long[][] answers = new long[rows][];
            long cpu = os.getProcessCpuTime();
            long started = System.nanoTime();
            for (int q = 0; q < rows && failure.get() == null; q++) {
                final int query = q;
                permits.acquire();
                long sent = System.nanoTime();
                session.executeAsync(select.bind(queries.get(q))).whenComplete((AsyncResultSet result, Throwable error) -> {
                    if (error != null) {
                        failure.compareAndSet(null, error);
                    } else {
                        latencies[query] = System.nanoTime() - sent;
                        List<Long> ids = new ArrayList<>();
                        for (Row row : result.currentPage()) {
                            ids.add(row.getLong(0));
                        }
                        answers[query] = ids.stream().mapToLong(Long::longValue).toArray();
                    }
                    permits.release();
                });
            }
            permits.acquire(concurrency);
            double seconds = (System.nanoTime() - started) / 1e9;
            double cpuSeconds = (os.getProcessCpuTime() - cpu) / 1e9;
            if (failure.get() != null) {
                System.err.println("query failed: " + failure.get());
                System.exit(1);
            }
            try (PrintWriter out = new PrintWriter(args[6], StandardCharsets.UTF_8)) {
                for (long[] ids : answers) {
                    StringBuilder line = new StringBuilder();
                    for (int i = 0; i < ids.length; i++) {
                        line.append(i > 0 ? " " : "").append(ids[i]);
                    }
                    out.println(line);
                }
            }
            long[] sorted = latencies.clone();
            Arrays.sort(sorted);
            System.out.printf("%d queries in %.3f s: %.1f qps at concurrency %d; latency ms p50 %.3f p95 %.3f "
                    + "p99 %.3f max %.3f; cpu %.3f s%n", rows, seconds, rows / seconds, concurrency,
                    rank(sorted, 50) / 1e6, rank(sorted, 95) / 1e6, rank(sorted, 99) / 1e6, rank(sorted, 100) / 1e6,
                    cpuSeconds);
        }
    }

    private static long rank(long[] sorted, double p) {
        int index = Math.max(1, Math.min(sorted.length, (int) Math.ceil(p / 100 * sorted.length))) - 1;
        return sorted.length == 0 ? 0 : sorted[index];
    }
}
