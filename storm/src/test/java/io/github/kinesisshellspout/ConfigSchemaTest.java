package io.github.kinesisshellspout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigSchemaTest {
    private static final ConfigSchema SCHEMA = ConfigSchema.load();

    private static Map<String, Object> conf(Object... keysAndValues) {
        Map<String, Object> conf = new HashMap<>(Map.of("streamName", "orders", "region", "eu-west-1"));
        for (int i = 0; i < keysAndValues.length; i += 2) {
            if (keysAndValues[i + 1] == null) {
                conf.remove((String) keysAndValues[i]);
            } else {
                conf.put((String) keysAndValues[i], keysAndValues[i + 1]);
            }
        }
        return conf;
    }

    private static String problem(Map<String, Object> conf) {
        return assertThrows(IllegalArgumentException.class, () -> SCHEMA.validate(conf), conf.toString()).getMessage();
    }

    @Test
    void acceptsWhatTheProcessAccepts() {
        SCHEMA.validate(conf());
        SCHEMA.validate(conf("streamName", null, "streamArn", "arn:aws:kinesis:eu-west-1:123456789012:stream/orders"));
        SCHEMA.validate(conf("initialPosition", "TRIM_HORIZON", "maxEmitPerNext", 50L, "checkpointIntervalMs", 500.0,
            "zookeeper", Map.of("connect", "zk:2181", "auth", Map.of("scheme", "digest", "payload", "u:p")),
            "outputFields", List.of("data", "shardId"), "deaggregate", false));
        SCHEMA.validate(conf("initialPosition", Map.of("atTimestamp", "2026-12-01T00:00:00Z")));
    }

    @Test
    void refusesATypoAWrongTypeAndAValueOutOfRangeNamingTheKey() {
        assertTrue(problem(conf("maxEmitPerNxt", 10)).startsWith(
            "bad configuration: kinesis.spout.maxEmitPerNxt = 10: unknown key; did you mean maxEmitPerNext? allowed keys: streamName, streamArn, streams, region"));
        assertTrue(problem(conf("banana", 1)).startsWith("bad configuration: kinesis.spout.banana = 1: unknown key; allowed keys: "));
        assertTrue(problem(conf("zookeeper", Map.of("conect", "zk:2181"))).startsWith(
            "bad configuration: kinesis.spout.zookeeper.conect = \"zk:2181\": unknown key; did you mean connect? allowed keys: "));
        assertEquals("bad configuration: kinesis.spout.maxEmitPerNext = \"10\": must be an integer",
            problem(conf("maxEmitPerNext", "10")));
        assertEquals("bad configuration: kinesis.spout.maxEmitPerNext = 2.5: must be an integer",
            problem(conf("maxEmitPerNext", 2.5)));
        assertEquals("bad configuration: kinesis.spout.maxEmitPerNext = 0: must be >= 1", problem(conf("maxEmitPerNext", 0)));
        assertEquals("bad configuration: kinesis.spout.maxGetRecordsPerSecond = 0: must be > 0", problem(conf("maxGetRecordsPerSecond", 0)));
        SCHEMA.validate(conf("maxGetRecordsPerSecond", 2.5));
        assertEquals("bad configuration: kinesis.spout.maxRecordAgeMs = 999: must be >= 1000", problem(conf("maxRecordAgeMs", 999)));
        assertEquals("bad configuration: kinesis.spout.maxRecordAgeMs = 1.5: must be an integer", problem(conf("maxRecordAgeMs", 1.5)));
        SCHEMA.validate(conf("maxRecordAgeMs", 31_536_000_000L));
        assertEquals("bad configuration: kinesis.spout.dataFormat = \"xml\": allowed: \"utf8\", \"base64\", \"json\"",
            problem(conf("dataFormat", "xml")));
        assertEquals("bad configuration: kinesis.spout.region = \"us east 1\": " + ConfigSchema.REGION_SHAPE, problem(conf("region", "us east 1")));
        assertEquals("bad configuration: kinesis.spout.region = \"us-east1\": must be an AWS region name: words and a number "
            + "joined by dashes, such as \"us-east-1\", \"eu-central-2\" or \"us-gov-west-1\"", problem(conf("region", "us-east1")));
        SCHEMA.validate(conf("region", "us-gov-west-1"));
        SCHEMA.validate(conf("region", "us-isob-east-1"));
        assertEquals("bad configuration: kinesis.spout.region = (missing): is required", problem(conf("region", null)));
        assertEquals("bad configuration: kinesis.spout.zookeeper.sessionTimeoutMs = 10: must be >= 1000",
            problem(conf("zookeeper", Map.of("sessionTimeoutMs", 10))));
        assertEquals("bad configuration: kinesis.spout.outputFields[1] = \"nope\": allowed: "
            + "\"partitionKey\", \"data\", \"shardId\", \"sequenceNumber\", \"arrivalTimestamp\", \"subSequence\", \"streamName\"",
            problem(conf("outputFields", List.of("data", "nope"))));
    }

    private static Map<String, Object> entryWithFields() {
        Map<String, Object> entry = new java.util.LinkedHashMap<>();
        entry.put("streamName", "orders");
        entry.put("outputFields", List.of("data"));
        return entry;
    }

    @Test
    void severalStreamsAreCheckedEntryByEntry() {
        SCHEMA.validate(conf("streamName", null, "streams", List.of(Map.of("streamName", "orders"),
            Map.of("streamArn", "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks", "region", "eu-west-1",
                "initialPosition", "TRIM_HORIZON", "outputStream", "clicks"))));
        assertEquals("bad configuration: kinesis.spout.streams[0].outputFields = [\"data\"]: unknown key; outputFields is a key of "
            + "kinesis.spout itself (for every stream), not of this entry; allowed keys: streamName, streamArn, region, initialPosition, "
            + "outputStream, consumerArn",
            problem(conf("streamName", null, "streams", List.of(entryWithFields()))));
        assertTrue(problem(conf("streamName", null, "streams", List.of(Map.of("streamName", "a"), Map.of("streamName", "b", "outputFeilds", List.of("data")))))
            .startsWith("bad configuration: kinesis.spout.streams[1].outputFeilds = [\"data\"]: unknown key; did you mean outputFields? "));
        assertTrue(problem(conf("streamName", null, "streams", List.of(Map.of("streamNme", "b"))))
            .startsWith("bad configuration: kinesis.spout.streams[0].streamNme = \"b\": unknown key; did you mean streamName? allowed keys: "));
        assertTrue(problem(conf("streamName", null, "streams", List.of(Map.of("region", "eu-west-1"))))
            .contains("exactly one of streamName or streamArn is required"));
        assertTrue(problem(conf("streams", List.of(Map.of("streamName", "b"))))
            .contains("exactly one of streamName or streamArn or streams is required"));
    }

    @Test
    void oneOfNamesTheAlternativesAndSecretsAreNotShown() {
        assertEquals("bad configuration: kinesis.spout.streamName = (missing): exactly one of streamName or streamArn or streams is required",
            problem(conf("streamName", null)));
        assertEquals("bad configuration: kinesis.spout.streamName = \"orders\": exactly one of streamName or streamArn or streams is required",
            problem(conf("streamArn", "arn:aws:kinesis:eu-west-1:123456789012:stream/orders")));
        assertEquals("bad configuration: kinesis.spout.initialPosition = \"EARLIEST\": allowed: \"LATEST\", \"TRIM_HORIZON\" or {\"atTimestamp\": ...}",
            problem(conf("initialPosition", "EARLIEST")));
        String secret = problem(conf("zookeeper", Map.of("auth", Map.of("scheme", "digest", "payload", "no-colon"))));
        assertEquals("bad configuration: kinesis.spout.zookeeper.auth.payload = (hidden): must match pattern \"^[^:\\s]+:\\S+$\"", secret);
    }

    @Test
    void aSchemaKeywordItCannotFollowIsRefusedWhenLoaded() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> new ConfigSchema(Map.of("properties", Map.of("x", Map.of("type", "string", "format", "uri")))));
        assertTrue(e.getMessage().contains("schema keyword format at #/properties/x"), e.getMessage());
    }

    @Test
    void parsesJson() {
        assertEquals(Map.of("a", List.of(1L, 2.5, "x\"\n\u00e9", true, false)),
            ConfigSchema.Json.parse(" {\"a\": [1, 2.5, \"x\\\"\\n\\u00e9\", true, false]} "));
        Map<?, ?> withNull = (Map<?, ?>) ConfigSchema.Json.parse("{\"a\":null,\"b\":{}}");
        assertTrue(withNull.containsKey("a") && withNull.get("a") == null);
        assertThrows(IllegalStateException.class, () -> ConfigSchema.Json.parse("{\"a\": 1} x"));
    }
}
