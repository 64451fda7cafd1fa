package io.github.kinesisshellspout.example;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.net.minidev.json.JSONValue;

/**
 * The example's JSON configuration file (see topology-examples/README.md). Parsed with the JSON library
 * Storm itself ships, so the topology jar needs no dependency of its own.
 */
public final class ExampleConfig {
    private final Map<String, Object> json;

    private ExampleConfig(Map<String, Object> json) {
        this.json = json;
    }

    @SuppressWarnings("unchecked")
    public static ExampleConfig load(Path file) throws IOException {
        Object parsed = JSONValue.parse(Files.readString(file, StandardCharsets.UTF_8));
        if (!(parsed instanceof Map)) {
            throw new IllegalArgumentException(file + ": expected a JSON object");
        }
        return new ExampleConfig((Map<String, Object>) parsed);
    }

    public String topologyName() {
        return string("topologyName", "kinesis-example");
    }

    /** The {@code kinesis.spout} map: the short keys of this file, then everything under {@code spout}. */
    public Map<String, Object> spoutConf() {
        return spoutConf(Map.of());
    }

    /**
     * The {@code kinesis.spout} map of a spout component: {@link #spoutConf()}, then the keys of {@code over}
     * ({@code zookeeper} merged key by key, every other key replaced).
     */
    @SuppressWarnings("unchecked")
    public Map<String, Object> spoutConf(Map<String, Object> over) {
        Map<String, Object> conf = new LinkedHashMap<>();
        putIfSet(conf, "streamName", json.get("stream"));
        putIfSet(conf, "region", json.get("region"));
        putIfSet(conf, "endpoint", json.get("endpoint"));
        putIfSet(conf, "dataFormat", json.get("dataFormat"));
        Map<String, Object> zookeeper = new LinkedHashMap<>();
        putIfSet(zookeeper, "connect", json.get("zookeeper"));
        for (Map<String, Object> extra : List.of((Map<String, Object>) json.getOrDefault("spout", Map.of()), over)) {
            for (Map.Entry<String, Object> entry : extra.entrySet()) {
                if (entry.getKey().equals("zookeeper") && entry.getValue() instanceof Map) {
                    zookeeper.putAll((Map<String, Object>) entry.getValue());
                } else {
                    conf.put(entry.getKey(), entry.getValue());
                }
            }
        }
        conf.put("zookeeper", zookeeper);
        return conf;
    }

    /**
     * More spout components besides {@code kinesis}, each {@code {"name": ..., "spout": {...}}} with
     * optionally {@code spoutParallelism}, {@code spoutTasks} and {@code compactSerializer} of its own
     * (default: 1, its parallelism, false). Its {@code spout} keys go over the file's (give it an
     * {@code applicationName} of its own to read the stream apart from the others). Every spout feeds the
     * same recorder, which records the component a tuple came from.
     */
    @SuppressWarnings("unchecked")
    public List<SpoutSpec> moreSpouts() {
        List<SpoutSpec> specs = new ArrayList<>();
        for (Object item : (List<Object>) json.getOrDefault("moreSpouts", List.of())) {
            if (!(item instanceof Map)) {
                throw new IllegalArgumentException("moreSpouts: expected a list of objects");
            }
            Map<String, Object> spec = (Map<String, Object>) item;
            Object name = spec.get("name");
            if (!(name instanceof String) || ((String) name).isEmpty()) {
                throw new IllegalArgumentException("moreSpouts[" + specs.size() + "].name: expected a component name");
            }
            int parallelism = spec.get("spoutParallelism") == null ? 1 : ((Number) spec.get("spoutParallelism")).intValue();
            int tasks = spec.get("spoutTasks") == null ? parallelism : ((Number) spec.get("spoutTasks")).intValue();
            Map<String, Object> over = (Map<String, Object>) spec.getOrDefault("spout", Map.of());
            specs.add(new SpoutSpec((String) name, spoutConf(over), parallelism, tasks,
                Boolean.TRUE.equals(spec.get("compactSerializer"))));
        }
        return specs;
    }

    /** One more spout component (see {@link #moreSpouts()}). */
    public record SpoutSpec(String name, Map<String, Object> spoutConf, int parallelism, int tasks, boolean compactSerializer) {
    }

    /**
     * {@code "holdAcksUntil": "<file>"}: the acking bolt holds every tuple, unacked, until that file exists,
     * then acks what it held and everything after at once (to see {@code topology.max.spout.pending} stop a
     * tracking spout). Default null: acks at once.
     */
    public String holdAcksUntil() {
        return string("holdAcksUntil", null);
    }

    /** Fields to declare instead of the spout's {@code outputFields}, or null (only to see the spout refuse them). */
    @SuppressWarnings("unchecked")
    public List<String> declaredFields() {
        Object fields = json.get("declaredFields");
        return fields == null ? null : new ArrayList<>((List<String>) fields);
    }

    /**
     * {@code "grouping": "partitionKey"} (the default; shuffle anyway when that field is not emitted) or {@code "shuffle"}.
     * Storm 2's shuffle prefers bolt tasks in the same worker; {@code topology.disable.loadaware.messaging}
     * makes it spread over all workers.
     */
    public boolean groupByPartitionKey() {
        return string("grouping", "partitionKey").equals("partitionKey");
    }

    /** With {@code dataFormat: "json"}: register json-smart's types with Kryo (default true; false only to see what happens without). */
    public boolean registerJsonTypes() {
        return !Boolean.FALSE.equals(json.get("registerJsonTypes"));
    }

    /** {@code "fanOut": "<consumer name>"}: read with enhanced fan-out through that consumer (the builder's {@code fanOut}); default null, polling. */
    public String fanOut() {
        return string("fanOut", null);
    }

    /** The compact wire format between the spout's tasks and their processes (default false: Storm's JSON). */
    public boolean compactSerializer() {
        return Boolean.TRUE.equals(json.get("compactSerializer"));
    }

    public int spoutParallelism() {
        return integer("spoutParallelism", 2);
    }

    /** More tasks than executors leaves room to rebalance the spout up later. */
    public int spoutTasks() {
        return integer("spoutTasks", spoutParallelism());
    }

    public int workers() {
        return integer("workers", 2);
    }

    public int boltParallelism() {
        return integer("boltParallelism", 2);
    }

    public double failFraction() {
        return ((Number) json.getOrDefault("failFraction", 0)).doubleValue();
    }

    public String outputFile() {
        return string("outputFile", null);
    }

    /** In local mode: seconds to run before shutting down; 0 runs until stdin closes or says {@code kill}. */
    public int localSeconds() {
        return integer("localSeconds", 0);
    }

    /** Extra topology configuration, e.g. {@code topology.max.spout.pending}. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> stormConf() {
        return new HashMap<>((Map<String, Object>) json.getOrDefault("storm", Map.of()));
    }

    /** In local mode: added to LocalCluster's own (daemon) configuration, e.g. {@code executor.metrics.frequency.secs}. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> localClusterConf() {
        return new HashMap<>((Map<String, Object>) json.getOrDefault("localCluster", Map.of()));
    }

    private String string(String key, String fallback) {
        Object value = json.get(key);
        return value == null ? fallback : value.toString();
    }

    private int integer(String key, int fallback) {
        Object value = json.get(key);
        return value == null ? fallback : ((Number) value).intValue();
    }

    private static void putIfSet(Map<String, Object> map, String key, Object value) {
        if (value != null) {
            map.put(key, value);
        }
    }
}
