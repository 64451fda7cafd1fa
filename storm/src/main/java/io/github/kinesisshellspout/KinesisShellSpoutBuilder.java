package io.github.kinesisshellspout;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the {@code kinesis.spout} map key by key, for code that prefers methods to a map literal:
 *
 * <pre>
 * KinesisShellSpout spout = KinesisShellSpout.builder()
 *     .streamName("orders").region("eu-west-1").applicationName("orders-to-s3")
 *     .set("retry.maxRetries", 5)
 *     .build();
 * </pre>
 *
 * Every key of the configuration table (the project's docs/configuration.md) can be set with {@link #set};
 * the named methods are the common ones.
 */
public final class KinesisShellSpoutBuilder {
    private final Map<String, Object> conf = new HashMap<>();
    private String node = "node";
    private boolean registerJsonTypes = true;

    KinesisShellSpoutBuilder() {
    }

    public KinesisShellSpoutBuilder streamName(String streamName) {
        return set("streamName", streamName);
    }

    public KinesisShellSpoutBuilder streamArn(String streamArn) {
        return set("streamArn", streamArn);
    }

    /**
     * Several Kinesis streams in this one component, instead of {@link #streamName} or {@link #streamArn}: each
     * entry a map with {@code streamName} or {@code streamArn} and optionally {@code region},
     * {@code initialPosition}, {@code outputStream} and {@code consumerArn} (the top-level keys are its defaults).
     */
    public KinesisShellSpoutBuilder streams(List<Map<String, Object>> streams) {
        return set("streams", streams);
    }

    /** Adds a stream to {@code streams}, read with the top-level keys and emitted on the top-level output stream. */
    public KinesisShellSpoutBuilder addStream(String streamName) {
        return addStreamEntry(Map.of("streamName", streamName));
    }

    /** Adds a stream to {@code streams} whose tuples are emitted on their own Storm stream {@code outputStream}. */
    public KinesisShellSpoutBuilder addStream(String streamName, String outputStream) {
        return addStreamEntry(Map.of("streamName", streamName, "outputStream", outputStream));
    }

    @SuppressWarnings("unchecked")
    private KinesisShellSpoutBuilder addStreamEntry(Map<String, Object> entry) {
        Object streams = conf.get("streams");
        List<Object> entries = streams instanceof List ? new ArrayList<>((List<Object>) streams) : new ArrayList<>();
        entries.add(entry);
        conf.put("streams", entries);
        return this;
    }

    public KinesisShellSpoutBuilder region(String region) {
        return set("region", region);
    }

    public KinesisShellSpoutBuilder endpoint(String endpoint) {
        return set("endpoint", endpoint);
    }

    /** Where checkpoints live in ZooKeeper: set it, so that renaming the topology does not start over. */
    public KinesisShellSpoutBuilder applicationName(String applicationName) {
        return set("applicationName", applicationName);
    }

    /** {@code LATEST} or {@code TRIM_HORIZON}; other forms through {@link #set}. */
    public KinesisShellSpoutBuilder initialPosition(String initialPosition) {
        return set("initialPosition", initialPosition);
    }

    /**
     * {@code zookeeper.connect}: {@code host:port[,host:port...][/chroot]}. Optional: without it the spout
     * uses Storm's own ZooKeeper ({@code storm.zookeeper.servers} and {@code storm.zookeeper.port}).
     * Credentials: {@code set("zookeeper.auth", Map.of("scheme", "digest", "payload", "user:password"))}.
     */
    public KinesisShellSpoutBuilder zookeeper(String connect) {
        return set("zookeeper.connect", connect);
    }

    public KinesisShellSpoutBuilder outputFields(String... fields) {
        return set("outputFields", List.of(fields));
    }

    public KinesisShellSpoutBuilder outputStream(String stream) {
        return set("outputStream", stream);
    }

    /** {@code utf8}, {@code base64} or {@code json}. */
    public KinesisShellSpoutBuilder dataFormat(String dataFormat) {
        return set("dataFormat", dataFormat);
    }

    /**
     * Enhanced fan-out through the stream consumer {@code consumerName}, which the spout registers at its
     * first start and never deregisters ({@code readMode} {@code fanOut}). Or {@code readMode} {@code polling}
     * (the default) through {@link #set}.
     */
    public KinesisShellSpoutBuilder fanOut(String consumerName) {
        set("readMode", "fanOut");
        return set("consumerName", consumerName);
    }

    /** Enhanced fan-out through a consumer the operator registered and manages ({@code readMode} {@code fanOut}). */
    public KinesisShellSpoutBuilder fanOutConsumerArn(String consumerArn) {
        set("readMode", "fanOut");
        return set("consumerArn", consumerArn);
    }

    /**
     * How shards are shared among the tasks: {@code count} (the default: within one of each other) or
     * {@code throughput} (each task within 10 % of the mean bytes/s, as whole shards allow).
     */
    public KinesisShellSpoutBuilder balance(String balance) {
        return set("balance", balance);
    }

    /**
     * {@code GetRecords} calls per second per shard, at most 5 (Kinesis's limit for every application reading
     * the stream together): give each of N applications polling one stream 5/N so that they never throttle
     * each other.
     */
    public KinesisShellSpoutBuilder maxGetRecordsPerSecond(double callsPerSecond) {
        return set("maxGetRecordsPerSecond", callsPerSecond);
    }

    /**
     * {@code maxRecordAgeMs}, as Lambda's {@code MaximumRecordAgeInSeconds}: a record older than this (by its
     * arrival time in Kinesis) when it is about to be emitted, for the first time or again after a fail, is not
     * emitted but dead-lettered ({@link #deadLetters}) or skipped, and passed by the checkpoint. From 1000 ms to
     * 365 days; off unless set.
     */
    public KinesisShellSpoutBuilder maxRecordAgeMs(long ageMs) {
        return set("maxRecordAgeMs", ageMs);
    }

    /**
     * What a crash may cost, as storm-kafka-client names it: {@code at-least-once} (the default: failed tuples
     * re-emitted, a crash repeats what was in flight), {@code at-most-once} (the checkpoint is written past each
     * fetched batch before it is emitted: a crash loses, never repeats) or {@code none} (checkpointed as emitted,
     * periodically: a crash repeats up to one checkpoint interval). The last two never replay a fail.
     */
    public KinesisShellSpoutBuilder delivery(String delivery) {
        return set("delivery", delivery);
    }

    /**
     * With {@code delivery} {@code at-most-once} or {@code none}, as storm-kafka-client's
     * {@code setTupleTrackingEnforced}: tuples keep message ids so that {@code topology.max.spout.pending} and the
     * complete latency work; their acks and fails only release them.
     */
    public KinesisShellSpoutBuilder tupleTracking(boolean tracked) {
        return set("tupleTracking", tracked);
    }

    /** Records failed more than {@code retry.maxRetries} times go to this stream instead of being skipped. */
    public KinesisShellSpoutBuilder deadLetters(String stream) {
        set("retry.onExhausted", "deadLetter");
        return set("retry.deadLetterStream", stream);
    }

    /**
     * Any key of the configuration; a dotted key sets a key of a nested object
     * ({@code "retry.maxRetries"}, {@code "zookeeper.sessionTimeoutMs"}).
     */
    @SuppressWarnings("unchecked")
    public KinesisShellSpoutBuilder set(String key, Object value) {
        String[] path = key.split("\\.");
        Map<String, Object> at = conf;
        for (int i = 0; i < path.length - 1; i++) {
            Object next = at.computeIfAbsent(path[i], k -> new HashMap<String, Object>());
            if (!(next instanceof Map)) {
                throw new IllegalArgumentException("kinesis.spout." + key + ": " + String.join(".", List.of(path).subList(0, i + 1)) + " is already set to a value that is not an object");
            }
            at = (Map<String, Object>) next;
        }
        at.put(path[path.length - 1], value);
        return this;
    }

    /** Every key of {@code spoutConf} (a {@code kinesis.spout} map), over what was set before. */
    public KinesisShellSpoutBuilder setAll(Map<String, Object> spoutConf) {
        conf.putAll(KinesisShellSpout.copy(spoutConf));
        return this;
    }

    private boolean compactSerializer;
    private List<String> nodeOptions = List.of();

    /** The Node.js executable, if {@code node} on the worker's PATH is not the one (Node 20 or newer). */
    public KinesisShellSpoutBuilder node(String executable) {
        this.node = executable;
        return this;
    }

    /**
     * Options for node, after {@link KinesisShellSpout#NODE_OPTIONS} and before the script, e.g.
     * {@code --optimize-for-size}: a smaller V8 heap for more CPU per tuple (measured in the project's
     * docs/memory.md). Each must start with {@code -}.
     */
    public KinesisShellSpoutBuilder nodeOptions(String... options) {
        this.nodeOptions = new ArrayList<>(Arrays.asList(options));
        return this;
    }

    /**
     * Leaves out the Kryo registrations of {@code dataFormat: "json"}, for a topology that registers them
     * itself or sets {@code topology.fall.back.on.java.serialization}.
     */
    public KinesisShellSpoutBuilder withoutJsonKryoRegistrations() {
        this.registerJsonTypes = false;
        return this;
    }

    /** The compact wire format for this spout's tasks: see {@link KinesisShellSpout#useCompactSerializer()}. */
    public KinesisShellSpoutBuilder compactSerializer() {
        this.compactSerializer = true;
        return this;
    }

    public KinesisShellSpout build() {
        KinesisShellSpout spout = new KinesisShellSpout(conf, node, nodeOptions, registerJsonTypes);
        return compactSerializer ? spout.useCompactSerializer() : spout;
    }
}
