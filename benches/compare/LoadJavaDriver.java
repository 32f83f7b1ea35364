import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.data.CqlVector;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Java driver 4.x as a peer of `cqlwire load` (compiled and run by load.py): reads a 2-D
 * little-endian float32 .npy file, binds row n as (n, CqlVector of its floats) to a prepared INSERT
 * and sends it with executeAsync, at most CONCURRENCY requests in flight (a semaphore).
 *
 * <pre>java -cp CLASSES:LIB/* LoadJavaDriver FILE.npy HOST PORT KS.TABLE CONCURRENCY</pre>
 *
 * Prints one line: rows, seconds and rows per second of the inserts (from the first request to the
 * last acknowledgement) and the protocol version; exits 1 if any insert failed.
 */
public final class LoadJavaDriver {
    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: LoadJavaDriver FILE.npy HOST PORT KS.TABLE CONCURRENCY");
            System.exit(2);
        }
        int concurrency = Integer.parseInt(args[4]);
        MappedByteBuffer npy;
        try (FileChannel channel = FileChannel.open(Paths.get(args[0]))) {
            npy = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
        }
        npy.order(ByteOrder.LITTLE_ENDIAN);
        // Header: magic (6 bytes), version (2), header length (2 bytes in v1, 4 in v2/v3), text.
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
        long rows = Long.parseLong(shape.group(1));
        int dimension = Integer.parseInt(shape.group(2));

        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10))
                .build();
        try (CqlSession session = CqlSession.builder()
                .addContactPoint(new InetSocketAddress(args[1], Integer.parseInt(args[2])))
                .withLocalDatacenter("datacenter1")
                .withConfigLoader(config)
                .build()) {
            PreparedStatement insert = session.prepare("INSERT INTO " + args[3] + " (id, emb) VALUES (?, ?)");
            Semaphore permits = new Semaphore(concurrency);
            AtomicLong written = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long started = System.nanoTime();
            for (long row = 0; row < rows && failure.get() == null; row++) {
                List<Float> floats = new ArrayList<>(dimension);
                int offset = dataStart + (int) (row * dimension * 4);
                for (int i = 0; i < dimension; i++) {
                    floats.add(npy.getFloat(offset + 4 * i));
                }
                permits.acquire();
                session.executeAsync(insert.bind(row, CqlVector.newInstance(floats)))
                        .whenComplete((result, error) -> {
                            if (error != null) {
                                failure.compareAndSet(null, error);
                            } else {
                                written.incrementAndGet();
                            }
                            permits.release();
                        });
            }
            permits.acquire(concurrency);
            double seconds = (System.nanoTime() - started) / 1e9;
            if (failure.get() != null) {
                System.err.println("insert failed: " + failure.get());
                System.exit(1);
            }
            System.out.printf("%d rows in %.2f s: %.0f rows/s at concurrency %d; protocol %s%n", written.get(),
                    seconds, written.get() / seconds, concurrency, session.getContext().getProtocolVersion());
        }
    }
}
