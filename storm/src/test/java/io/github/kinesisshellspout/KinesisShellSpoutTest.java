package io.github.kinesisshellspout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.util.TreeMap;
import org.apache.storm.Config;
import org.apache.storm.metric.api.IMetricsConsumer.DataPoint;
import org.apache.storm.serialization.SerializationFactory;
import org.apache.storm.generated.StreamInfo;
import org.apache.storm.topology.OutputFieldsGetter;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.Test;

class KinesisShellSpoutTest {
    private static final Map<String, Object> BASE = Map.of("streamName", "orders", "region", "eu-west-1", "zookeeper", Map.of("connect", "zk:2181"));

    private static Map<String, Object> conf(Object... keysAndValues) {
        Map<String, Object> conf = new HashMap<>(BASE);
        for (int i = 0; i < keysAndValues.length; i += 2) {
            conf.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return conf;
    }

    private static Map<String, List<String>> declared(KinesisShellSpout spout) {
        OutputFieldsGetter getter = new OutputFieldsGetter();
        spout.declareOutputFields(getter);
        Map<String, List<String>> streams = new HashMap<>();
        for (Map.Entry<String, StreamInfo> e : getter.getFieldsDeclaration().entrySet()) {
            streams.put(e.getKey(), e.getValue().get_output_fields());
        }
        return streams;
    }

    @Test
    void startsNodeWithItsOptionsBeforeTheScript() throws ReflectiveOperationException {
        assertEquals(List.of("/opt/node/bin/node", "--max-semi-space-size=2", "--single-threaded", "kinesis-spout.cjs"),
            List.of(KinesisShellSpout.command("/opt/node/bin/node", List.of())));
        // What Storm's ShellSpout will run: its command, as the builder leaves it.
        java.lang.reflect.Field field = org.apache.storm.spout.ShellSpout.class.getDeclaredField("command");
        field.setAccessible(true);
        String[] command = (String[]) field.get(KinesisShellSpout.builder().setAll(conf()).node("node20").build());
        assertEquals(List.of("node20", "--max-semi-space-size=2", "--single-threaded", "kinesis-spout.cjs"),
            List.of(command));
        command = (String[]) field.get(KinesisShellSpout.builder().setAll(conf()).nodeOptions("--optimize-for-size").build());
        assertEquals(List.of("node", "--max-semi-space-size=2", "--single-threaded", "--optimize-for-size", "kinesis-spout.cjs"),
            List.of(command));
    }

    @Test
    void refusesANodeOptionThatNodeWouldTakeForTheScript() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> KinesisShellSpout.builder().setAll(conf()).nodeOptions("--optimize-for-size", "other.js").build());
        assertEquals("node options: \"other.js\" is not an option (each starts with -, e.g. --optimize-for-size)",
            e.getMessage());
        assertThrows(IllegalArgumentException.class,
            () -> KinesisShellSpout.builder().setAll(conf()).nodeOptions((String) null).build());
    }

    @Test
    void severalKinesisStreamsDeclareEachEntrysOutputStreamOnce() {
        Map<String, Object> conf = new HashMap<>(BASE);
        conf.remove("streamName");
        conf.put("outputFields", List.of("streamName", "data"));
        conf.put("streams", List.of(Map.of("streamName", "orders"), Map.of("streamName", "clicks", "outputStream", "clicks"),
            Map.of("streamName", "views")));
        KinesisShellSpout spout = new KinesisShellSpout(conf);
        assertEquals(Map.of("default", List.of("streamName", "data"), "clicks", List.of("streamName", "data")), declared(spout));
        assertEquals(List.of("default", "clicks"), spout.outputStreams());
        conf.put("retry", Map.of("onExhausted", "deadLetter", "deadLetterStream", "clicks"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KinesisShellSpout(conf));
        assertTrue(e.getMessage().contains("kinesis.spout.retry.deadLetterStream = \"clicks\""), e.getMessage());
        Map<String, Object> both = new HashMap<>(conf);
        both.remove("retry");
        both.put("streamName", "orders");
        e = assertThrows(IllegalArgumentException.class, () -> new KinesisShellSpout(both));
        assertTrue(e.getMessage().contains("exactly one of streamName or streamArn or streams"), e.getMessage());
    }

    @Test
    void startsNodeWithTwoMallocArenasUnlessTheWorkerOrTheUserSaysOtherwise() {
        assertEquals(Map.of("MALLOC_ARENA_MAX", "2"), KinesisShellSpout.processEnv(Map.of("PATH", "/usr/bin"), Map.of()));
        assertEquals(Map.of(), KinesisShellSpout.processEnv(Map.of("MALLOC_ARENA_MAX", "8"), Map.of()));
        assertEquals(Map.of("MALLOC_ARENA_MAX", "4", "TZ", "UTC"),
            KinesisShellSpout.processEnv(Map.of(), Map.of("MALLOC_ARENA_MAX", "4", "TZ", "UTC")));
    }

    @Test
    void declaresTheDefaultFieldsOnTheDefaultStream() {
        assertEquals(Map.of("default", List.of("partitionKey", "data", "shardId", "sequenceNumber", "arrivalTimestamp")), declared(new KinesisShellSpout(conf())));
    }

    @Test
    void declaresTheConfiguredFieldsOnTheConfiguredStream() {
        KinesisShellSpout spout = new KinesisShellSpout(conf("outputFields", List.of("data", "shardId"), "outputStream", "records"));
        assertEquals(Map.of("records", List.of("data", "shardId")), declared(spout));
        assertEquals("records", spout.outputStream());
    }

    @Test
    void subSequenceMayBeDeclaredButIsNotADefault() {
        KinesisShellSpout spout = new KinesisShellSpout(conf("outputFields", List.of("data", "sequenceNumber", "subSequence")));
        assertEquals(Map.of("default", List.of("data", "sequenceNumber", "subSequence")), declared(spout));
        assertFalse(SpoutStreams.DEFAULT_OUTPUT_FIELDS.contains("subSequence"));
    }

    @Test
    void declaresTheDeadLetterStreamOnlyWhenRecordsGoThere() {
        Map<String, Object> deadLetter = conf("outputFields", List.of("partitionKey", "data"), "retry", Map.of("onExhausted", "deadLetter", "maxRetries", 3));
        assertEquals(
            Map.of("default", List.of("partitionKey", "data"), "deadLetter", List.of("partitionKey", "data", "attempts", "lastFailureTime")),
            declared(new KinesisShellSpout(deadLetter)));
        Map<String, Object> named = conf("retry", Map.of("onExhausted", "deadLetter", "deadLetterStream", "poison"));
        assertTrue(declared(new KinesisShellSpout(named)).containsKey("poison"));
        assertEquals(Map.of("default", SpoutStreams.DEFAULT_OUTPUT_FIELDS), declared(new KinesisShellSpout(conf("retry", Map.of("onExhausted", "skip", "deadLetterStream", "poison")))));
        assertNull(new KinesisShellSpout(conf()).deadLetterStream());
    }

    @Test
    void withARecordAgeLimitDeadLettersAlsoCarryTheirReasonAndAge() {
        KinesisShellSpout spout = KinesisShellSpout.builder().streamName("s").region("us-east-1").outputFields("data")
            .deadLetters("dead").maxRecordAgeMs(60_000).build();
        assertEquals(60_000L, ((Map<?, ?>) spout.getComponentConfiguration().get("kinesis.spout")).get("maxRecordAgeMs"));
        assertEquals(Map.of("default", List.of("data"), "dead", List.of("data", "attempts", "lastFailureTime", "reason", "ageMs")),
            declared(spout));
        // Too old records only skipped: no dead-letter stream to declare.
        assertEquals(Map.of("default", List.of("data")),
            declared(KinesisShellSpout.builder().streamName("s").region("us-east-1").outputFields("data").maxRecordAgeMs(60_000).build()));
        assertThrows(IllegalArgumentException.class,
            () -> KinesisShellSpout.builder().streamName("s").region("us-east-1").maxRecordAgeMs(999).build());
    }

    @Test
    void malformedKeysThatDecideTheDeclarationsAreRefusedNamingTheKey() {
        record Case(Map<String, Object> conf, String key) { }
        List<Case> cases = List.of(
            new Case(conf("outputFields", List.of("data", "nope")), "kinesis.spout.outputFields[1]"),
            new Case(conf("outputFields", List.of()), "kinesis.spout.outputFields"),
            new Case(conf("outputFields", List.of("data", "data")), "kinesis.spout.outputFields"),
            new Case(conf("outputFields", "data"), "kinesis.spout.outputFields"),
            new Case(conf("outputStream", ""), "kinesis.spout.outputStream"),
            new Case(conf("outputStream", 3), "kinesis.spout.outputStream"),
            new Case(conf("retry", "deadLetter"), "kinesis.spout.retry"),
            new Case(conf("retry", Map.of("onExhausted", "drop")), "kinesis.spout.retry.onExhausted"),
            new Case(conf("retry", Map.of("onExhausted", "deadLetter", "deadLetterStream", "default")), "kinesis.spout.retry.deadLetterStream"));
        for (Case c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KinesisShellSpout(c.conf()), c.toString());
            assertTrue(e.getMessage().startsWith("bad configuration: " + c.key() + " = "), e.getMessage());
        }
    }

    @Test
    void everyKeyIsCheckedAgainstTheSchemaWhenTheSpoutIsMade() {
        IllegalArgumentException typo = assertThrows(IllegalArgumentException.class, () -> new KinesisShellSpout(conf("checkpointIntervalMS", 500)));
        assertTrue(typo.getMessage().startsWith("bad configuration: kinesis.spout.checkpointIntervalMS = 500: unknown key"), typo.getMessage());
        IllegalArgumentException type = assertThrows(IllegalArgumentException.class, () -> new KinesisShellSpout(conf("deaggregate", "yes")));
        assertEquals("bad configuration: kinesis.spout.deaggregate = \"yes\": must be a boolean", type.getMessage());
    }

    private static final Map<String, String> EMPTY_MAP_REGISTRATION = Map.of("java.util.Collections$EmptyMap", "io.github.kinesisshellspout.EmptyMapSerializer");

    @Test
    void passesTheMapAsComponentConfigurationWithTheJsonKryoTypesOnlyForJson() {
        Map<String, Object> plain = new KinesisShellSpout(conf()).getComponentConfiguration();
        assertEquals(conf(), plain.get("kinesis.spout"));
        assertEquals(List.of(EMPTY_MAP_REGISTRATION, "java.util.TreeMap"), plain.get(Config.TOPOLOGY_KRYO_REGISTER));

        Map<String, Object> json = new KinesisShellSpout(conf("dataFormat", "json")).getComponentConfiguration();
        assertEquals(List.of(EMPTY_MAP_REGISTRATION, "java.util.TreeMap", "org.apache.storm.shade.net.minidev.json.JSONObject", "org.apache.storm.shade.net.minidev.json.JSONArray"),
            json.get(Config.TOPOLOGY_KRYO_REGISTER));

        Map<String, Object> optedOut = KinesisShellSpout.builder().setAll(conf("dataFormat", "json")).withoutJsonKryoRegistrations().build().getComponentConfiguration();
        assertEquals(List.of(EMPTY_MAP_REGISTRATION, "java.util.TreeMap"), optedOut.get(Config.TOPOLOGY_KRYO_REGISTER));
    }

    private static Object roundTrip(Kryo kryo, Object value) {
        Output out = new Output(4096, -1);
        kryo.writeClassAndObject(out, value);
        return kryo.readClassAndObject(new Input(out.toBytes()));
    }

    /**
     * Storm 2.8 leaves Collections.emptyMap() (a data point's dimensions) and TreeMap (the metrics' values)
     * unregistered; the spout's registrations carry them.
     */
    @Test
    void metricsDataPointsGoThroughKryoWithTheSpoutsRegistrations() {
        DataPoint point = new DataPoint("kinesis-spout", new TreeMap<>(Map.of("emitted", 3L, "shardsHeld", 2L)));
        Map<String, Object> stormConf = new HashMap<>(Utils.readDefaultConfig());
        stormConf.put(Config.TOPOLOGY_FALL_BACK_ON_JAVA_SERIALIZATION, false);
        assertThrows(KryoException.class, () -> roundTrip(SerializationFactory.getKryo(stormConf), point));

        stormConf.put(Config.TOPOLOGY_KRYO_REGISTER, new KinesisShellSpout(conf("dataFormat", "json")).getComponentConfiguration().get(Config.TOPOLOGY_KRYO_REGISTER));
        assertEquals(point, roundTrip(SerializationFactory.getKryo(stormConf), point));
    }

    @Test
    void theProcessIsToldWhichMetricsAreRegisteredAndStormsBucketSize() {
        Map<String, Object> stormConf = Map.of("topology.name", "t");
        assertEquals(Map.of("version", 1, "process", "kinesis-spout", "shards", "kinesis-spout-shards", "intervalSecs", 60),
            KinesisShellSpout.processConf(stormConf).get("kinesis.spout.metrics"));
        assertEquals("t", KinesisShellSpout.processConf(stormConf).get("topology.name"));
        Map<String, Object> tenSecs = Map.of(Config.TOPOLOGY_BUILTIN_METRICS_BUCKET_SIZE_SECS, 10L);
        assertEquals(10, ((Map<?, ?>) KinesisShellSpout.processConf(tenSecs).get("kinesis.spout.metrics")).get("intervalSecs"));
    }

    @Test
    void theBuilderMakesTheSameSpoutAsTheMap() {
        KinesisShellSpout built = KinesisShellSpout.builder()
            .streamName("orders").region("eu-west-1").zookeeper("zk:2181").set("zookeeper.sessionTimeoutMs", 5000)
            .outputFields("data").outputStream("records").deadLetters("dead").dataFormat("json").balance("throughput").set("retry.maxRetries", 2)
            .maxGetRecordsPerSecond(2.5).build();
        Map<String, Object> expected = conf(
            "zookeeper", Map.of("connect", "zk:2181", "sessionTimeoutMs", 5000),
            "outputFields", List.of("data"), "outputStream", "records", "dataFormat", "json", "balance", "throughput", "maxGetRecordsPerSecond", 2.5,
            "retry", Map.of("onExhausted", "deadLetter", "deadLetterStream", "dead", "maxRetries", 2));
        assertEquals(expected, built.getComponentConfiguration().get("kinesis.spout"));
        assertEquals(Map.of("records", List.of("data"), "dead", List.of("data", "attempts", "lastFailureTime")), declared(built));
        assertThrows(IllegalArgumentException.class, () -> KinesisShellSpout.builder().set("region", "x").set("region.sub", 1));
    }

    @Test
    void theBuilderAddsStreams() {
        KinesisShellSpout built = KinesisShellSpout.builder().region("eu-west-1").zookeeper("zk:2181")
            .outputFields("streamName", "data").addStream("orders").addStream("clicks", "clicks").build();
        Map<String, Object> spoutConf = (Map<String, Object>) built.getComponentConfiguration().get("kinesis.spout");
        assertEquals(List.of(Map.of("streamName", "orders"), Map.of("streamName", "clicks", "outputStream", "clicks")),
            spoutConf.get("streams"));
        assertEquals(List.of("default", "clicks"), built.outputStreams());
        assertEquals(Map.of("default", List.of("streamName", "data"), "clicks", List.of("streamName", "data")), declared(built));
        KinesisShellSpout listed = KinesisShellSpout.builder().region("eu-west-1").zookeeper("zk:2181")
            .streams(List.of(Map.of("streamName", "orders"), Map.of("streamName", "audit", "region", "us-east-1"))).build();
        assertEquals(List.of("default"), listed.outputStreams());
        // Both forms at once: refused when the spout is built (storm jar), naming the keys.
        IllegalArgumentException both = assertThrows(IllegalArgumentException.class,
            () -> KinesisShellSpout.builder().region("eu-west-1").streamName("orders").addStream("clicks").build());
        assertTrue(both.getMessage().contains("exactly one of streamName or streamArn or streams"), both.getMessage());
    }

    @Test
    void theBuilderSetsTheReadMode() {
        Map<String, Object> named = KinesisShellSpout.builder().streamName("orders").region("eu-west-1").zookeeper("zk:2181").fanOut("orders-app").build().getComponentConfiguration();
        assertEquals(conf("readMode", "fanOut", "consumerName", "orders-app"), named.get("kinesis.spout"));
        String arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/orders/consumer/orders-app:1700000000";
        Map<String, Object> given = KinesisShellSpout.builder().streamName("orders").region("eu-west-1").zookeeper("zk:2181").fanOutConsumerArn(arn).build().getComponentConfiguration();
        assertEquals(conf("readMode", "fanOut", "consumerArn", arn), given.get("kinesis.spout"));
    }

    @Test
    void theBuilderSetsTheDeliveryMode() {
        Map<String, Object> built = KinesisShellSpout.builder().streamName("orders").region("eu-west-1").zookeeper("zk:2181").delivery("at-most-once").tupleTracking(true).build().getComponentConfiguration();
        assertEquals(conf("delivery", "at-most-once", "tupleTracking", true), built.get("kinesis.spout"));
    }

    @Test
    void survivesJavaSerializationAsStormShipsIt() {
        // Map.of and List.of copies are what users pass; the spout keeps its own mutable, serializable copy.
        KinesisShellSpout spout = new KinesisShellSpout(conf("outputFields", List.of("data"), "retry", Map.of("onExhausted", "deadLetter")));
        KinesisShellSpout copy = Utils.javaDeserialize(Utils.javaSerialize(spout), KinesisShellSpout.class);
        assertEquals(declared(spout), declared(copy));
        assertEquals(spout.getComponentConfiguration(), copy.getComponentConfiguration());
    }
}
