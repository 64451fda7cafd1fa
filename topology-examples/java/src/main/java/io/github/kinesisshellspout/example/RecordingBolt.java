package io.github.kinesisshellspout.example;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/**
 * Records every tuple it receives (replays included), then passes its message id and spout component on,
 * anchored, to the acking bolt: a failure there replays the record through here again.
 */
public class RecordingBolt extends BaseRichBolt {
    private final String outputFile;
    private transient OutputCollector collector;
    private transient TopologyContext context;
    private transient Recorder recorder;

    public RecordingBolt(String outputFile) {
        this.outputFile = outputFile;
    }

    @Override
    public void prepare(Map<String, Object> topoConf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        this.context = context;
        this.recorder = new Recorder(outputFile);
    }

    @Override
    public void execute(Tuple tuple) {
        String id = messageId(tuple);
        Map<String, Object> values = new LinkedHashMap<>();
        for (String field : tuple.getFields()) {
            values.put(field, tuple.getValueByField(field));
        }
        Object data = values.get("data");
        if (data instanceof byte[] bytes) {
            // The compact wire format's base64 data: raw bytes, which the JSON recorder writes as base64.
            values.put("data", java.util.Base64.getEncoder().encodeToString(bytes));
        }
        Map<String, Object> event = new LinkedHashMap<>();
        event.put("event", "received");
        event.put("id", id);
        // The spout component it came from, when the topology has several (moreSpouts).
        event.put("component", tuple.getSourceComponent());
        // The Storm stream it came on (a spout reading several Kinesis streams may emit each on its own).
        event.put("stream", tuple.getSourceStreamId());
        event.put("values", values);
        // The Java type the tuple arrived with: parsed JSON must still be a Map after Kryo.
        event.put("dataClass", data == null ? null : data.getClass().getName());
        event.put("task", context.getThisTaskId());
        event.put("worker", context.getThisWorkerPort());
        event.put("sourceTask", tuple.getSourceTask());
        event.put("fromOtherWorker", !context.getThisWorkerTasks().contains(tuple.getSourceTask()));
        event.put("at", System.currentTimeMillis());
        recorder.record(event);
        collector.emit(tuple, new Values(id, tuple.getSourceComponent()));
        collector.ack(tuple);
    }

    /**
     * The record's id, {@code <shardId>:<sequenceNumber>}, when both fields are in the tuple; with a
     * {@code streamName} field too, {@code <streamName>/<shardId>:<sequenceNumber>} (shard ids repeat across
     * the streams of one spout).
     */
    static String messageId(Tuple tuple) {
        if (!tuple.contains("shardId") || !tuple.contains("sequenceNumber")) {
            return "";
        }
        String id = tuple.getStringByField("shardId") + ":" + tuple.getStringByField("sequenceNumber");
        return tuple.contains("streamName") ? tuple.getStringByField("streamName") + "/" + id : id;
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("id", "component"));
    }

    @Override
    public void cleanup() {
        recorder.close();
    }
}
