package io.github.kinesisshellspout;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The spout's command-line tools from the jar, for hosts that have the topology jar and Node.js but not
 * the npm package: extracts the bundled script and runs {@code node kinesis-spout.cjs <args...>}.
 *
 * <pre>
 * java -jar kinesis-shell-spout-0.1.0.jar status --config topology-conf.json
 * java -cp my-topology.jar io.github.kinesisshellspout.KinesisSpoutTool reset --config conf.json --to TRIM_HORIZON
 * </pre>
 *
 * The Node.js executable is {@code node} on the PATH, or the environment variable {@code KINESIS_SPOUT_NODE}.
 */
public final class KinesisSpoutTool {
    static final String RESOURCE = "/resources/" + KinesisShellSpout.SCRIPT;
    /** The DynamoDB client of {@code import --from kcl} and {@code export --to kcl}, which the script requires from beside itself. */
    static final String DYNAMODB = "kinesis-spout-dynamodb.cjs";
    /** What the script runs as a tool; anything else it runs as the spout, waiting for Storm on stdin. */
    static final Set<String> COMMANDS = Set.of("status", "reset", "deregister-consumer", "import", "export", "help");

    private KinesisSpoutTool() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("kinesis-spout-");
        int code;
        try {
            Path script = extract(dir);
            String node = System.getenv().getOrDefault("KINESIS_SPOUT_NODE", "node");
            if (isToolCommand(args)) {
                code = run(node, script, args);
            } else {
                // Without a command the script would be the spout, waiting for Storm's handshake on this terminal.
                System.err.println("kinesis-spout: expected a command, status, reset, deregister-consumer, import or export (the spout itself is run by Storm)");
                run(node, script, new String[] {"--help"});
                code = 2;
            }
        } catch (IOException e) {
            System.err.println("kinesis-spout: " + e.getMessage());
            code = 1;
        } finally {
            deleteQuietly(dir);
        }
        System.exit(code);
    }

    /** A tool's command line: {@code status}, {@code reset}, {@code deregister-consumer}, {@code import}, {@code export}, {@code help} or a flag such as {@code --help}. */
    static boolean isToolCommand(String[] args) {
        return args.length > 0 && (COMMANDS.contains(args[0]) || args[0].startsWith("-"));
    }

    /** Copies the bundled script into {@code dir}; fails naming the resource if this jar lacks it. */
    static Path extract(Path dir) throws IOException {
        Path script = dir.resolve(KinesisShellSpout.SCRIPT);
        try (InputStream in = KinesisSpoutTool.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IOException(RESOURCE + " is not on the classpath: run this from the kinesis-shell-spout jar (or a jar that contains it)");
            }
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        }
        try (InputStream in = KinesisSpoutTool.class.getResourceAsStream("/resources/" + DYNAMODB)) {
            // A jar built before the KCL tools has none: every other tool runs without it.
            if (in != null) {
                Files.copy(in, dir.resolve(DYNAMODB), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        return script;
    }

    /** Runs the script with this JVM's stdin, stdout and stderr; returns its exit code. */
    static int run(String node, Path script, String[] args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(node, script.toString()));
        command.addAll(List.of(args));
        Process process;
        try {
            process = new ProcessBuilder(command).inheritIO().start();
        } catch (IOException e) {
            throw new IOException("cannot start " + node + " (Node.js 20 or newer; set KINESIS_SPOUT_NODE to its path): " + e.getMessage(), e);
        }
        // The JVM stopped by a signal must not leave the tool running (e.g. `status --watch`).
        Thread stop = new Thread(process::destroy);
        Runtime.getRuntime().addShutdownHook(stop);
        try {
            return process.waitFor();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
        }
    }

    private static void deleteQuietly(Path dir) {
        try (var paths = Files.walk(dir)) {
            paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temp dir left behind is harmless
        }
    }
}
