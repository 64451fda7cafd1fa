import io.github.kinesisshellspout.CompactSerializer;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.storm.multilang.ISerializer;
import org.apache.storm.multilang.JsonSerializer;
import org.apache.storm.multilang.ShellMsg;
import org.apache.storm.multilang.SpoutMsg;
import org.apache.storm.shade.net.minidev.json.JSONObject;
import org.apache.storm.shade.net.minidev.json.JSONValue;

/**
 * Storm's own serializer classes against the spout process, as ShellSpout drives a spout: one command at
 * a time, each read to its sync; every emitted tuple acked with its own command (ShellSpout's ack). The
 * wire format is all that differs between {@code json} (Storm's JsonSerializer) and {@code compact}
 * (CompactSerializer, which defers the acks as it does in a topology).
 *
 * <pre>java -cp CLASSPATH SerializerBench.java json|compact SECONDS WARMUP_SECONDS CONF_JSON node SCRIPT</pre>
 *
 * Prints one JSON line: tuples/s over the measured window, and CPU per tuple of the process (/proc) and
 * of this driver's thread (the executor thread's share: serializing and pipe I/O) and of this JVM.
 */
public final class SerializerBench {
    public static void main(String[] args) throws Exception {
        boolean compact = args[0].equals("compact");
        double seconds = Double.parseDouble(args[1]);
        double warmup = Double.parseDouble(args[2]);
        @SuppressWarnings("unchecked")
        Map<String, Object> conf = (Map<String, Object>) JSONValue.parse(Files.readString(Path.of(args[3])));
        Path pidDir = Files.createTempDirectory("bench-pids");
        Process p = new ProcessBuilder(args[4], args[5]).redirectError(new File("/dev/null")).start();
        Map<String, Object> context = Map.of("taskid", 1, "componentid", "kinesis", "task->component", Map.of("1", "kinesis"),
            "stream->outputfields", Map.of("default",
                List.of("partitionKey", "data", "shardId", "sequenceNumber", "arrivalTimestamp")));
        ISerializer s;
        if (compact) {
            CompactSerializer c = new CompactSerializer();
            c.initialize(p.getOutputStream(), p.getInputStream());
            c.handshake(conf, pidDir.toString(), context);
            s = c;
        } else {
            jsonHandshake(p.getOutputStream(), p.getInputStream(), conf, pidDir.toString(), context);
            s = new JsonSerializer();
            s.initialize(p.getOutputStream(), p.getInputStream());
        }
        command(s, "activate", "", null);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        List<Object> ids = new ArrayList<>();
        long firstTuple = 0;
        long measuredFrom = 0;
        long until = Long.MAX_VALUE;
        long tuples = 0;
        long emptyNexts = 0;
        long[] cpuAtStart = null;
        long startedAt = System.nanoTime();
        while (true) {
            long now = System.nanoTime();
            if (now - startedAt > 120_000_000_000L && firstTuple == 0) {
                throw new IllegalStateException("no tuple within 120 s");
            }
            if (firstTuple != 0 && measuredFrom == 0 && now - firstTuple >= (long) (warmup * 1e9)) {
                measuredFrom = now;
                until = now + (long) (seconds * 1e9);
                tuples = 0;
                emptyNexts = 0;
                cpuAtStart = cpu(p.pid(), threads);
            }
            if (now >= until) {
                break;
            }
            ids.clear();
            command(s, "next", "", ids);
            if (ids.isEmpty()) {
                emptyNexts++;
                Thread.sleep(0, 100_000);
                continue;
            }
            if (firstTuple == 0) {
                firstTuple = System.nanoTime();
            }
            for (Object id : ids) {
                command(s, "ack", id, null);
            }
            tuples += ids.size();
        }
        long end = System.nanoTime();
        long[] cpuAtEnd = cpu(p.pid(), threads);
        double window = (end - measuredFrom) / 1e9;
        JSONObject out = new JSONObject();
        out.put("serializer", compact ? "compact" : "json");
        out.put("tuplesPerSecond", tuples / window);
        out.put("nodeCpuMicrosPerTuple", (cpuAtEnd[0] - cpuAtStart[0]) * 10_000.0 / tuples);
        out.put("driverThreadCpuMicrosPerTuple", (cpuAtEnd[1] - cpuAtStart[1]) / 1000.0 / tuples);
        out.put("jvmCpuMicrosPerTuple", (cpuAtEnd[2] - cpuAtStart[2]) * 10_000.0 / tuples);
        out.put("emptyNextsPerSecond", emptyNexts / window);
        out.put("tuples", tuples);
        System.out.println(out.toJSONString());
        p.destroy();
        p.waitFor();
    }

    /** Sends one command and reads to its sync, collecting the ids of what it emitted. */
    private static void command(ISerializer s, String command, Object id, List<Object> emitted) throws Exception {
        SpoutMsg msg = new SpoutMsg();
        msg.setCommand(command);
        msg.setId(id);
        s.writeSpoutMsg(msg);
        for (;;) {
            ShellMsg reply = s.readShellMsg();
            switch (reply.getCommand()) {
                case "sync":
                    return;
                case "emit":
                    if (emitted != null && reply.getId() != null) {
                        emitted.add(reply.getId());
                    }
                    break;
                case "log", "error", "metrics":
                    break;
                default:
                    throw new IllegalStateException("unexpected " + reply.getCommand());
            }
        }
    }

    /** What JsonSerializer.connect sends and reads, without a TopologyContext. */
    private static void jsonHandshake(OutputStream in, InputStream out, Map<String, Object> conf, String pidDir,
                                      Object context) throws Exception {
        JSONObject setup = new JSONObject();
        setup.put("pidDir", pidDir);
        setup.put("conf", conf);
        setup.put("context", context);
        in.write((setup.toJSONString() + "\nend\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (;;) {
            int b = out.read();
            if (b < 0) {
                throw new IllegalStateException("the process closed its output before its pid");
            }
            if (b == '\n') {
                if (line.toString(StandardCharsets.UTF_8).equals("end")) {
                    return;
                }
                line.reset();
            } else {
                line.write(b);
            }
        }
    }

    /** [process utime+stime (ticks), this thread's CPU (ns), this JVM's utime+stime (ticks)]. */
    private static long[] cpu(long pid, ThreadMXBean threads) throws Exception {
        return new long[] {ticks("/proc/" + pid + "/stat"), threads.getCurrentThreadCpuTime(), ticks("/proc/self/stat")};
    }

    private static long ticks(String stat) throws Exception {
        String text = Files.readString(Path.of(stat));
        String[] f = text.substring(text.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
}
