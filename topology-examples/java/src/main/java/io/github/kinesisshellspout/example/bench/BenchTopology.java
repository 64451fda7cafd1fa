package io.github.kinesisshellspout.example.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.LocalCluster;
import org.apache.storm.generated.KillOptions;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.apache.storm.topology.IRichSpout;
import org.apache.storm.topology.TopologyBuilder;

/**
 * The end-to-end benchmark's LocalCluster (npm run bench, section storm): one JVM kept for many runs, each
 * a topology of one spout task feeding one acking bolt task in one worker. Commands on stdin, one per line,
 * each answered by {@code control: <command> ok|failed: <why>}:
 * <ul>
 * <li>{@code submit <file.json>}: {@code {"name", "spout": "native"|"shell"|"kinesis", "payloadBytes",
 *     "command": [...], "env": {...}, "componentConf": {...}, "kinesis": {...}, "storm": {...}}}</li>
 * <li>{@code count}: prints {@code bench: count <tuples acked by the bolt so far> <System.nanoTime()>
 *     <tuple trees timed by the spouts so far> <their complete latencies' sum, ns>} ({@link CompleteLatency})</li>
 * <li>{@code kill <name>}: kills that topology at once</li>
 * <li>{@code kill} (or stdin closed): shuts the cluster down and exits</li>
 * </ul>
 */
public final class BenchTopology {
    static final String SPOUT = "spout";

    private BenchTopology() {
    }

    @SuppressWarnings("unchecked")
    static StormTopology build(Map<String, Object> run) {
        TopologyBuilder builder = new TopologyBuilder();
        builder.setSpout(SPOUT, spout(run), 1);
        builder.setBolt("ack", new CountingAckBolt(), 1).shuffleGrouping(SPOUT);
        return builder.createTopology();
    }

    @SuppressWarnings("unchecked")
    private static IRichSpout spout(Map<String, Object> run) {
        String kind = (String) run.get("spout");
        return switch (kind) {
            case "native" -> new NativeSpout(((Number) run.get("payloadBytes")).intValue());
            case "shell" -> new BenchShellSpout((List<String>) run.get("command"),
                (Map<String, String>) run.getOrDefault("env", Map.of()),
                (Map<String, Object>) run.getOrDefault("componentConf", Map.of()));
            case "kinesis" -> new BenchKinesisSpout((Map<String, Object>) run.get("kinesis"));
            default -> throw new IllegalArgumentException("spout: " + kind + "; allowed: native, shell, kinesis");
        };
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        LocalCluster cluster = new LocalCluster();
        say("started");
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = stdin.readLine(); line != null && !line.trim().equals("kill"); line = stdin.readLine()) {
            String[] words = line.trim().split("\\s+");
            try {
                switch (words[0]) {
                    case "submit" -> {
                        Map<String, Object> run = (Map<String, Object>) JSONValue.parse(Files.readString(Path.of(words[1])));
                        Config conf = new Config();
                        conf.setNumWorkers(1);
                        conf.putAll((Map<String, Object>) run.getOrDefault("storm", Map.of()));
                        cluster.submitTopology((String) run.get("name"), conf, build(run));
                    }
                    case "count" -> System.out.println("bench: count " + CountingAckBolt.ACKED.sum() + " " + System.nanoTime()
                        + " " + CompleteLatency.TREES.sum() + " " + CompleteLatency.NANOS.sum());
                    case "kill" -> {
                        // Deactivated first, its in-flight acks answered: a ShellSpout killed while its executor
                        // reads the subprocess can die on the closed pipe, and in LocalCluster a dying worker
                        // halts the whole JVM (seen: "Halting process: Worker died", the section lost).
                        cluster.deactivate(words[1]);
                        Thread.sleep(1_000);
                        KillOptions options = new KillOptions();
                        options.set_wait_secs(0);
                        cluster.killTopologyWithOpts(words[1], options);
                    }
                    default -> throw new IllegalArgumentException("unknown command");
                }
                say(line.trim() + " ok");
            } catch (Exception e) {
                say(line.trim() + " failed: " + e);
            }
        }
        Thread closer = new Thread(() -> {
            try {
                cluster.close();
            } catch (Exception e) {
                e.printStackTrace();
            }
        });
        closer.setDaemon(true);
        closer.start();
        closer.join(15_000);
        say("stopped");
        System.exit(0);
    }

    private static void say(String message) {
        System.out.println("control: " + message);
        System.out.flush();
    }
}
