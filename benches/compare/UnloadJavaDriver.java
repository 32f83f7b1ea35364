import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.data.CqlVector;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The Java driver 4.x as a peer of `cqlwire unload` (compiled and run by unload.py): pages through
 * `SELECT id, emb FROM KS.TABLE` (one query, PAGE rows a page), reading each row's id and vector as a
 * user would (getLong, getVector of Float), and writes no output.
 *
 * <pre>java -cp CLASSES:LIB/* UnloadJavaDriver HOST PORT KS.TABLE PAGE EXPECTED_ROWS</pre>
 *
 * Prints one line: rows, seconds and rows per second; exits 1 unless it read EXPECTED_ROWS rows.
 */
public final class UnloadJavaDriver {
    public static void main(String[] args) {
        if (args.length != 5) {
            System.err.println("usage: UnloadJavaDriver HOST PORT KS.TABLE PAGE EXPECTED_ROWS");
            System.exit(2);
        }
        int page = Integer.parseInt(args[3]);
        long expected = Long.parseLong(args[4]);
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(60))
                .withInt(DefaultDriverOption.REQUEST_PAGE_SIZE, page)
                .build();
        try (CqlSession session = CqlSession.builder()
                .addContactPoint(new InetSocketAddress(args[0], Integer.parseInt(args[1])))
                .withLocalDatacenter("datacenter1")
                .withConfigLoader(config)
                .build()) {
            long started = System.nanoTime();
            long rows = 0;
            double touched = 0;
            for (Row row : session.execute(SimpleStatement.newInstance("SELECT id, emb FROM " + args[2]))) {
                touched += row.getLong(0);
                CqlVector<Float> vector = row.getVector(1, Float.class);
                touched += vector.get(vector.size() - 1);
                rows++;
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.printf("%d rows in %.2f s: %.0f rows/s (%s)%n", rows, seconds, rows / seconds,
                    Double.isNaN(touched) ? "NaN seen" : "values read");
            if (rows != expected) {
                System.err.printf("read %d rows, not %d%n", rows, expected);
                System.exit(1);
            }
        }
    }
}
