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
    @SuppressWarnings("unchecked")
    public Map<String, Object> spoutConf() {
        Map<String, Object> conf = new LinkedHashMap<>();
        putIfSet(conf, "streamName", json.get("stream"));
        putIfSet(conf, "region", json.get("region"));
        putIfSet(conf, "endpoint", json.get("endpoint"));
        putIfSet(conf, "dataFormat", json.get("dataFormat"));
        Map<String, Object> zookeeper = new LinkedHashMap<>();
        putIfSet(zookeeper, "connect", json.get("zookeeper"));
        Map<String, Object> extra = (Map<String, Object>) json.getOrDefault("spout", Map.of());
        for (Map.Entry<String, Object> entry : extra.entrySet()) {
            if (entry.getKey().equals("zookeeper") && entry.getValue() instanceof Map) {
                zookeeper.putAll((Map<String, Object>) entry.getValue());
            } else {
                conf.put(entry.getKey(), entry.getValue());
            }
        }
        conf.put("zookeeper", zookeeper);
        return conf;
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
