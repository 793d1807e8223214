import java.nio.file.Files;
import java.nio.file.Path;

import io.helidon.webserver.WebServer;

/**
 * The start-up baseline: a trivial Helidon SE app with one route, started the way the broker is measured
 * ({@code --config FILE}, listening on the file's {@code metrics_listen} port). Not part of the broker.
 */
public final class Hello {
    private Hello() {
    }

    public static void main(String[] args) throws Exception {
        int port = 8080;
        for (String line : Files.readAllLines(Path.of(args[1]))) {
            if (line.startsWith("metrics_listen:")) {
                port = Integer.parseInt(line.substring(line.lastIndexOf(':') + 1).trim());
            }
        }
        WebServer.builder()
                .host("127.0.0.1")
                .port(port)
                .routing(r -> r.get("/healthz", (req, res) -> res.send("ok")))
                .build()
                .start();
    }
}
