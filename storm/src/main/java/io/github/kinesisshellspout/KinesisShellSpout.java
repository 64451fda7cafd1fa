package io.github.kinesisshellspout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.storm.Config;
import org.apache.storm.multilang.JsonSerializer;
import org.apache.storm.spout.ShellSpout;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.IRichSpout;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.tuple.Fields;
import org.apache.storm.utils.ObjectReader;

/**
 * The Kinesis spout: each task runs {@code node --max-semi-space-size=2 --single-threaded kinesis-spout.cjs}
 * from the topology jar's {@code resources/} folder (this artifact puts the script there) and speaks Storm's
 * multilang protocol with it.
 *
 * <pre>
 * builder.setSpout("kinesis", new KinesisShellSpout(Map.of(
 *     "streamName", "orders", "region", "eu-west-1", "applicationName", "orders-to-s3")), 4);
 * </pre>
 *
 * <p>It declares the output stream and fields the map configures (and the dead-letter stream when
 * {@code retry.onExhausted} is {@code deadLetter}), passes the map to its tasks as component
 * configuration ({@code kinesis.spout}, so two spouts in one topology can read two streams), registers
 * the Kryo types that {@code dataFormat: "json"} puts in tuples, and registers the metrics the process
 * reports ({@link #PROCESS_METRIC}, {@link #SHARD_METRIC}) and what Kryo needs to carry them to a
 * metrics consumer in another worker ({@link EmptyMapSerializer}, {@code TreeMap}).
 */
public class KinesisShellSpout extends ShellSpout implements IRichSpout {
    private static final long serialVersionUID = 1L;

    /** Component configuration key of the spout's own configuration. */
    public static final String CONF_KEY = "kinesis.spout";
    /** Conf key telling the process which metrics are registered (it reports none without it). */
    public static final String METRICS_CONF_KEY = "kinesis.spout.metrics";
    /** Per process: shards held, leases, records in memory, ZooKeeper state, tuples emitted/acked/failed. */
    public static final String PROCESS_METRIC = "kinesis-spout";
    /** Per shard, keys {@code <shardId>.<name>}: lag, in flight, rates, tuples emitted/acked/failed. */
    public static final String SHARD_METRIC = "kinesis-spout-shards";
    public static final String SCRIPT = "kinesis-spout.cjs";
    /**
     * Node options the process starts with, before {@link #SCRIPT}. {@code --max-semi-space-size=2} bounds
     * each of V8's two young-generation semi-spaces at 2 MiB (Node 20 lets them grow to 16 MiB each, and
     * pages once touched stay resident): measured, about 20 MiB less resident memory per task holding 64
     * idle shards, nothing at 8. {@code --single-threaded}: V8 compiles and collects garbage on the main
     * thread instead of its helper threads, whose freed memory glibc keeps: about 10 MiB less resident
     * memory per idle task, no more CPU per tuple (docs/memory.md has the measurements).
     */
    public static final List<String> NODE_OPTIONS = List.of("--max-semi-space-size=2", "--single-threaded");
    /**
     * Environment the process starts with unless the worker's own environment (or {@link #setEnv}) says
     * otherwise. {@code MALLOC_ARENA_MAX=2}: glibc gives each thread that allocates an arena of its own
     * (node has about ten: V8's compiler and GC helpers, libuv's pool) and keeps what each arena once held;
     * two arenas took about 6 MiB off an idle spout's resident memory (8 shards, Node 24: 88 MiB against
     * 94, medians of 3 alternating runs) at no measured CPU per record (docs/memory.md).
     */
    public static final Map<String, String> ENVIRONMENT = Map.of("MALLOC_ARENA_MAX", "2");
    /**
     * Storm parses the process's frames with its shaded json-smart, so with {@code dataFormat: "json"} the
     * data field holds these types, which Kryo refuses unless registered: the first such tuple sent to
     * another worker would halt it ("Class is not registered: ...JSONObject").
     */
    public static final List<String> JSON_TYPES = List.of(
        "org.apache.storm.shade.net.minidev.json.JSONObject", "org.apache.storm.shade.net.minidev.json.JSONArray");

    private static final String BUCKET_SECS_KEY = Config.TOPOLOGY_BUILTIN_METRICS_BUCKET_SIZE_SECS;
    private static final int DEFAULT_BUCKET_SECS = 60;

    /** Loaded once per JVM, when the first spout is made. */
    private static ConfigSchema schema;

    private final HashMap<String, Object> spoutConf;
    private final SpoutStreams streams;
    private final boolean registerJsonTypes;
    private boolean compactSerializer;
    /** What {@link #setEnv} was given, kept over {@link #ENVIRONMENT}. */
    private HashMap<String, String> env = new HashMap<>();

    /**
     * @param spoutConf the {@code kinesis.spout} map (see the project's docs/configuration.md), checked
     *                  here against the configuration's schema (every key, type and allowed value) and for
     *                  what decides the declared streams; what depends on the topology conf (defaults from
     *                  Storm's ZooKeeper and topology name) is checked by the process at start
     * @throws IllegalArgumentException naming the key, if one of those is malformed
     */
    public KinesisShellSpout(Map<String, Object> spoutConf) {
        this(spoutConf, "node", List.of(), true);
    }

    KinesisShellSpout(Map<String, Object> spoutConf, String node, List<String> nodeOptions, boolean registerJsonTypes) {
        super(command(node, nodeOptions));
        this.spoutConf = copy(Objects.requireNonNull(spoutConf, "the kinesis.spout map"));
        schema().validate(this.spoutConf);
        this.streams = SpoutStreams.from(this.spoutConf);
        this.registerJsonTypes = registerJsonTypes && "json".equals(spoutConf.get("dataFormat"));
    }

    /**
     * What Storm runs, in the topology jar's {@code resources/} folder: node, its options ({@link #NODE_OPTIONS},
     * then {@code extra}), the script.
     *
     * @throws IllegalArgumentException if an option of {@code extra} does not start with {@code -} (node
     *                                  would take it for the script)
     */
    static String[] command(String node, List<String> extra) {
        for (String option : extra) {
            if (option == null || !option.startsWith("-")) {
                throw new IllegalArgumentException("node options: " + (option == null ? "null" : "\"" + option + "\"")
                    + " is not an option (each starts with -, e.g. --optimize-for-size)");
            }
        }
        List<String> command = new ArrayList<>();
        command.add(node);
        command.addAll(NODE_OPTIONS);
        command.addAll(extra);
        command.add(SCRIPT);
        return command.toArray(new String[0]);
    }

    /**
     * This spout's tasks speak the compact wire format with their processes ({@link CompactSerializer}):
     * binary frames, acks carried many to a round trip. For this component only: the executor passes
     * {@code open} the conf the serializer is chosen from, so other multilang components of the topology
     * keep theirs. With {@code dataFormat: "base64"}, the data field is then a {@code byte[]} (the raw
     * bytes), not a base64 string.
     */
    public KinesisShellSpout useCompactSerializer() {
        this.compactSerializer = true;
        return this;
    }

    public static KinesisShellSpoutBuilder builder() {
        return new KinesisShellSpoutBuilder();
    }

    /** The stream the records are emitted on ({@code outputStream}, default {@code default}), for groupings. */
    public String outputStream() {
        return streams.outputStream;
    }

    /** Every stream the records are emitted on: with {@code streams}, each entry's {@code outputStream}. */
    public List<String> outputStreams() {
        return streams.outputStreams;
    }

    public List<String> outputFields() {
        return streams.outputFields;
    }

    /** The dead-letter stream, or null when records over {@code retry.maxRetries} are skipped. */
    public String deadLetterStream() {
        return streams.deadLetterStream;
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        for (String stream : streams.outputStreams) {
            declarer.declareStream(stream, new Fields(streams.outputFields));
        }
        if (streams.deadLetterStream != null) {
            declarer.declareStream(streams.deadLetterStream, new Fields(streams.deadLetterFields()));
        }
    }

    @Override
    public Map<String, Object> getComponentConfiguration() {
        Map<String, Object> conf = new HashMap<>();
        conf.put(CONF_KEY, spoutConf);
        // Nimbus merges every component's Kryo registrations into the topology's.
        List<Object> kryo = new ArrayList<>();
        // A metric's value (a TreeMap) and data point (with an empty map) go to a metrics consumer in
        // another worker through Kryo; Storm registers neither class, and an unregistered one halts the worker.
        kryo.add(Map.of(EmptyMapSerializer.EMPTY_MAP_CLASS, EmptyMapSerializer.class.getName()));
        kryo.add(TreeMap.class.getName());
        if (registerJsonTypes) {
            kryo.addAll(JSON_TYPES);
        }
        conf.put(Config.TOPOLOGY_KRYO_REGISTER, kryo);
        return conf;
    }

    /** Registers the metrics before the process starts: a frame naming an unregistered metric kills the worker. */
    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        int bucketSecs = bucketSecs(conf);
        context.registerMetric(PROCESS_METRIC, new KinesisShellMetric(PROCESS_METRIC), bucketSecs);
        context.registerMetric(SHARD_METRIC, new KinesisShellMetric(SHARD_METRIC), bucketSecs);
        super.setEnv(processEnv(System.getenv(), env));
        super.open(processConf(conf, compactSerializer), context, collector);
    }

    @Override
    public ShellSpout setEnv(Map<String, String> env) {
        this.env = new HashMap<>(env);
        return super.setEnv(this.env);
    }

    /**
     * Variables set in the process's environment on top of the worker's: {@link #ENVIRONMENT}'s, but those
     * the worker's environment already has, then {@code own} (what {@link #setEnv} was given).
     */
    static HashMap<String, String> processEnv(Map<String, String> worker, Map<String, String> own) {
        HashMap<String, String> env = new HashMap<>();
        for (Map.Entry<String, String> e : ENVIRONMENT.entrySet()) {
            if (!worker.containsKey(e.getKey())) env.put(e.getKey(), e.getValue());
        }
        env.putAll(own);
        return env;
    }

    /**
     * The conf the process receives in its handshake: Storm's, plus which metrics are registered and how
     * often Storm collects them. Added here rather than in the component configuration because the
     * bucket size is the topology's, known only now. On a Storm that drops the log command's level, the
     * serializer that keeps it ({@link LogLevelJsonSerializer}).
     */
    static Map<String, Object> processConf(Map<String, Object> conf) {
        return processConf(conf, false);
    }

    static Map<String, Object> processConf(Map<String, Object> conf, boolean compact) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("version", 1);
        metrics.put("process", PROCESS_METRIC);
        metrics.put("shards", SHARD_METRIC);
        metrics.put("intervalSecs", bucketSecs(conf));
        Map<String, Object> processConf = new HashMap<>(conf);
        processConf.put(METRICS_CONF_KEY, metrics);
        // Storm 2.6/2.7 log every line of the process at INFO (apache/storm#7954): the same serializer,
        // with the level kept. Only in place of Storm's own JSON one (the process speaks nothing else).
        Object serializer = conf.get(Config.TOPOLOGY_MULTILANG_SERIALIZER);
        if (compact) {
            // Set here, not in the component configuration: Storm's executor drops Storm's own keys from
            // that (Executor.normalizedComponentConf), but ShellSpout takes the serializer from this map.
            processConf.put(Config.TOPOLOGY_MULTILANG_SERIALIZER, CompactSerializer.class.getName());
        } else if (LogLevelJsonSerializer.STORM_DROPS_LEVELS
            && (serializer == null || JsonSerializer.class.getName().equals(serializer))) {
            processConf.put(Config.TOPOLOGY_MULTILANG_SERIALIZER, LogLevelJsonSerializer.class.getName());
        }
        return processConf;
    }

    static int bucketSecs(Map<String, Object> conf) {
        int secs = ObjectReader.getInt(conf.get(BUCKET_SECS_KEY), DEFAULT_BUCKET_SECS);
        return secs > 0 ? secs : DEFAULT_BUCKET_SECS;
    }

    /** A serializable deep copy: Storm serializes the spout, and a caller's map may be immutable or shared. */
    private static synchronized ConfigSchema schema() {
        if (schema == null) {
            schema = ConfigSchema.load();
        }
        return schema;
    }

    static HashMap<String, Object> copy(Map<String, Object> map) {
        HashMap<String, Object> copied = new HashMap<>();
        map.forEach((k, v) -> copied.put(k, copyValue(v)));
        return copied;
    }

    private static Object copyValue(Object value) {
        if (value instanceof Map<?, ?> map) {
            HashMap<String, Object> copied = new HashMap<>();
            map.forEach((k, v) -> copied.put(String.valueOf(k), copyValue(v)));
            return copied;
        }
        if (value instanceof List<?> list) {
            ArrayList<Object> copied = new ArrayList<>();
            list.forEach(v -> copied.add(copyValue(v)));
            return copied;
        }
        return value;
    }
}
