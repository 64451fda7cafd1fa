package io.github.kinesisshellspout.example;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.storm.Config;
import org.apache.storm.LocalCluster;
import org.apache.storm.generated.RebalanceOptions;
import org.apache.storm.generated.StormTopology;

/**
 * Runs the topology in an in-process LocalCluster (several workers, all in this JVM) and takes commands
 * on stdin, one per line, each answered by a line {@code control: <command> ok|failed: <why>}:
 * {@code deactivate}, {@code activate}, {@code rebalance <spoutExecutors> <workers> [waitSecs]}, {@code kill}.
 * Closing stdin is {@code kill} too, so the cluster never outlives whoever started it, unless a run time
 * in seconds is set.
 */
final class LocalRunner {
    private LocalRunner() {
    }

    static void run(String name, Config conf, StormTopology topology, int seconds) throws Exception {
        LocalCluster cluster = new LocalCluster();
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
            default -> throw new IllegalArgumentException("unknown command");
        }
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
