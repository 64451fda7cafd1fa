package io.github.kinesisshellspout.example;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.storm.Config;
import org.apache.storm.LocalCluster;
import org.apache.storm.generated.ExecutorStats;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.RebalanceOptions;
import org.apache.storm.generated.SpoutStats;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.generated.TopologySummary;
import org.apache.storm.shade.net.minidev.json.JSONValue;

/**
 * Runs the topology in an in-process LocalCluster (several workers, all in this JVM) and takes commands
 * on stdin, one per line, each answered by a line {@code control: <command> ok|failed: <why>}:
 * {@code deactivate}, {@code activate}, {@code rebalance <spoutExecutors> <workers> [waitSecs]}, {@code stats}
 * (first a line {@code topology stats: <json>}, see {@link #spoutStats}), {@code kill}.
 * {@code daemonConf} is added to the cluster's own configuration, e.g. {@code executor.metrics.frequency.secs}.
 * Closing stdin is {@code kill} too, so the cluster never outlives whoever started it, unless a run time
 * in seconds is set.
 */
final class LocalRunner {
    private LocalRunner() {
    }

    static void run(String name, Config conf, StormTopology topology, int seconds, Map<String, Object> daemonConf)
        throws Exception {
        LocalCluster cluster = new LocalCluster.Builder().withDaemonConf(daemonConf).build();
        AtomicBoolean closed = new AtomicBoolean();
        Runnable close = () -> {
            if (closed.compareAndSet(false, true)) {
                try {
                    // Shuts the workers down: ShellSpout.close() sends SIGTERM, the spout flushes checkpoints.
                    cluster.close();
                } catch (Exception e) {
                    e.printStackTrace();
                }
            }
        };
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // Bounded: after a worker halted the JVM, closing the cluster can hang on its dead threads.
            Thread closer = new Thread(close);
            closer.setDaemon(true);
            closer.start();
            try {
                closer.join(TimeUnit.SECONDS.toMillis(15));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        cluster.submitTopology(name, conf, topology);
        say("submitted " + name);
        if (seconds > 0) {
            Thread timer = new Thread(() -> {
                sleep(TimeUnit.SECONDS.toMillis(seconds));
                System.exit(0);
            });
            timer.setDaemon(true);
            timer.start();
        }
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line = stdin.readLine();
        for (; line != null && !line.trim().equals("kill"); line = stdin.readLine()) {
            String command = line.trim();
            if (!command.isEmpty()) {
                try {
                    control(cluster, name, command.split("\\s+"));
                    say(command + " ok");
                } catch (Exception e) {
                    say(command + " failed: " + e);
                }
            }
        }
        if (line == null && seconds > 0) {
            // Started without a stdin (e.g. `< /dev/null`): the timer ends the run.
            Thread.sleep(Long.MAX_VALUE);
        }
        close.run();
        say("stopped");
        // LocalCluster leaves non-daemon threads behind.
        System.exit(0);
    }

    private static void control(LocalCluster cluster, String name, String[] words) throws Exception {
        switch (words[0]) {
            case "deactivate" -> cluster.deactivate(name);
            case "activate" -> cluster.activate(name);
            case "rebalance" -> {
                RebalanceOptions options = new RebalanceOptions();
                options.put_to_num_executors(KinesisTopology.SPOUT, Integer.parseInt(words[1]));
                options.set_num_workers(Integer.parseInt(words[2]));
                // Storm's default wait is the message timeout (30 s): too slow to be useful here.
                options.set_wait_secs(words.length > 3 ? Integer.parseInt(words[3]) : 1);
                cluster.rebalance(name, options);
            }
            case "stats" -> System.out.println("topology stats: " + JSONValue.toJSONString(spoutStats(cluster, name)));
            default -> throw new IllegalArgumentException("unknown command");
        }
    }

    /** Stats windows are keyed by their length in seconds, and this one. */
    private static final String ALL_TIME = ":all-time";

    /**
     * Per spout component, summed over its executors, what Nimbus has from the workers' heartbeats (the
     * Storm UI's figures, all time, streams other than Storm's own; sent every
     * {@code executor.metrics.frequency.secs} of the cluster's configuration, 60 by default): tuples {@code emitted}, {@code acked},
     * {@code failed}, and {@code completeLatencyMs}, the mean complete latency of the acked tuple trees
     * (sampled at {@code topology.stats.sample.rate}; null with none acked).
     */
    static Map<String, Map<String, Object>> spoutStats(LocalCluster cluster, String name) throws Exception {
        String id = null;
        for (TopologySummary summary : cluster.getClusterInfo().get_topologies()) {
            if (summary.get_name().equals(name)) {
                id = summary.get_id();
            }
        }
        if (id == null) {
            throw new IllegalStateException("no topology " + name);
        }
        Map<String, long[]> counts = new TreeMap<>(); // emitted, acked, failed
        Map<String, Double> latencyTotals = new TreeMap<>();
        for (ExecutorSummary executor : cluster.getTopologyInfo(id).get_executors()) {
            ExecutorStats stats = executor.get_stats();
            if (stats == null || !stats.get_specific().is_set_spout()) {
                continue;
            }
            SpoutStats spout = stats.get_specific().get_spout();
            long[] c = counts.computeIfAbsent(executor.get_component_id(), k -> new long[3]);
            c[0] += userStreams(stats.get_emitted());
            c[1] += userStreams(spout.get_acked());
            c[2] += userStreams(spout.get_failed());
            Map<String, Long> acked = spout.get_acked().getOrDefault(ALL_TIME, Map.of());
            spout.get_complete_ms_avg().getOrDefault(ALL_TIME, Map.of()).forEach((stream, ms) -> {
                if (!stream.startsWith("__")) {
                    latencyTotals.merge(executor.get_component_id(), ms * acked.getOrDefault(stream, 0L), Double::sum);
                }
            });
        }
        Map<String, Map<String, Object>> out = new TreeMap<>();
        counts.forEach((component, c) -> {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("emitted", c[0]);
            line.put("acked", c[1]);
            line.put("failed", c[2]);
            line.put("completeLatencyMs", c[1] == 0 ? null : latencyTotals.getOrDefault(component, 0.0) / c[1]);
            out.put(component, line);
        });
        return out;
    }

    private static long userStreams(Map<String, Map<String, Long>> byWindow) {
        long sum = 0;
        for (Map.Entry<String, Long> e : byWindow.getOrDefault(ALL_TIME, Map.of()).entrySet()) {
            if (!e.getKey().startsWith("__")) {
                sum += e.getValue();
            }
        }
        return sum;
    }

    private static void say(String message) {
        System.out.println("control: " + message);
        System.out.flush();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
