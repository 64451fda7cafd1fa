package io.github.kinesisshellspout.example;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.spout.ShellSpout;
import org.apache.storm.topology.IRichSpout;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.tuple.Fields;

/**
 * The Kinesis spout: Storm runs {@code node kinesis-spout.cjs} from the jar's {@code resources/} folder and
 * speaks the multilang protocol with it. Each spout task is its own Node.js process.
 */
public class KinesisSpout extends ShellSpout implements IRichSpout {
    public static final List<String> DEFAULT_FIELDS =
        List.of("partitionKey", "data", "shardId", "sequenceNumber", "arrivalTimestamp");

    /**
     * Storm parses the script's frames with its shaded json-smart, so with {@code dataFormat: "json"} the
     * data field holds these types, which Kryo refuses unless registered: the first such tuple sent to
     * another worker would halt it ("Class is not registered: ...JSONObject").
     */
    public static final List<String> JSON_TYPES = List.of(
        "org.apache.storm.shade.net.minidev.json.JSONObject", "org.apache.storm.shade.net.minidev.json.JSONArray");

    private final HashMap<String, Object> spoutConf;
    private final List<String> fields;
    private final String stream;
    private boolean registerJsonTypes;

    /**
     * @param spoutConf the {@code kinesis.spout} map (see the project README's configuration table)
     * @param fields    the fields to declare; they must equal the spout's {@code outputFields}, which the
     *                  script checks at start (a mismatch is a configuration error, not a dead worker later)
     */
    public KinesisSpout(Map<String, Object> spoutConf, List<String> fields) {
        super("node", "kinesis-spout.cjs");
        this.spoutConf = new HashMap<>(spoutConf);
        this.fields = List.copyOf(fields);
        Object outputStream = spoutConf.get("outputStream");
        this.stream = outputStream == null ? "default" : outputStream.toString();
        this.registerJsonTypes = "json".equals(spoutConf.get("dataFormat"));
    }

    /** Only to show what happens without the registration (an e2e test does). */
    public KinesisSpout withoutJsonTypesRegistered() {
        registerJsonTypes = false;
        return this;
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declareStream(stream, new Fields(fields));
    }

    @Override
    public Map<String, Object> getComponentConfiguration() {
        // Component conf, not topology conf: two Kinesis spouts in one topology can read two streams.
        // Nimbus merges every component's Kryo registrations into the topology's.
        return registerJsonTypes
            ? Map.of("kinesis.spout", spoutConf, Config.TOPOLOGY_KRYO_REGISTER, JSON_TYPES)
            : Map.of("kinesis.spout", spoutConf);
    }
}
