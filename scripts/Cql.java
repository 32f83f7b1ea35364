// Runs CQL statements against a Cassandra node with the Java driver that comes with Cassandra's jars,
// for scripts/cassandra.sh cql (no cqlsh needed). Each argument is one statement; rows come out one per
// line, the columns separated by tabs. Exit code 1 with one line on standard error when a statement fails.
//
//   java -cp "LIB/*" scripts/Cql.java ADDRESS "STATEMENT" ...
import com.datastax.driver.core.Cluster;
import com.datastax.driver.core.ColumnDefinitions;
import com.datastax.driver.core.ResultSet;
import com.datastax.driver.core.Row;
import com.datastax.driver.core.Session;
import java.util.ArrayList;
import java.util.List;

public class Cql {
    public static void main(String[] args) {
        String user = System.getenv("CASSANDRA_USER");
        Cluster.Builder builder = Cluster.builder().addContactPoint(args[0]).withPort(9042)
            .withoutJMXReporting().withoutMetrics();
        if (user != null) {
            builder = builder.withCredentials(user, System.getenv("CASSANDRA_PASSWORD"));
        }
        try (Cluster cluster = builder.build(); Session session = cluster.connect()) {
            for (int i = 1; i < args.length; i++) {
                ResultSet rows = session.execute(args[i]);
                for (Row row : rows) {
                    List<String> values = new ArrayList<>();
                    ColumnDefinitions columns = row.getColumnDefinitions();
                    for (int c = 0; c < columns.size(); c++) {
                        values.add(String.valueOf(row.getObject(c)));
                    }
                    System.out.println(String.join("\t", values));
                }
            }
        } catch (RuntimeException error) {
            System.err.println("cassandra.sh: cql: " + error.getMessage());
            System.exit(1);
        }
    }
}
