package io.github.kinesisshellspout.example.bench;

import java.util.Map;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Values;

/**
 * Storm's own limit for the benchmark: a Java spout emitting the tuples the Node spouts emit (the default
 * fields, a payload of {@code payloadBytes} characters, a Kinesis-length sequence number, the message id
 * {@code shardId:sequenceNumber}), one per {@code nextTuple}, as a native spout does.
 */
public class NativeSpout extends BaseRichSpout {
    private static final long serialVersionUID = 1L;
    static final Fields FIELDS = new Fields("partitionKey", "data", "shardId", "sequenceNumber", "arrivalTimestamp");
    private static final String SHARD = "shardId-000000000000";
    private static final String PREFIX = "4968069227638";

    private final int payloadBytes;
    private transient SpoutOutputCollector collector;
    private transient CompleteLatency latency;
    private transient String payload;
    private transient String[] keys;
    private transient long arrival;
    private long seq;

    public NativeSpout(int payloadBytes) {
        this.payloadBytes = payloadBytes;
    }

    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        this.latency = new CompleteLatency();
        this.collector = latency.wrap(collector);
        this.payload = "x".repeat(payloadBytes);
        this.keys = new String[64];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "key-" + i;
        }
        this.arrival = System.currentTimeMillis();
    }

    @Override
    public void nextTuple() {
        seq += 1;
        String digits = Long.toString(seq);
        String sequence = PREFIX + "0".repeat(20 - digits.length()) + digits;
        collector.emit(new Values(keys[(int) (seq % keys.length)], payload, SHARD, sequence, arrival), SHARD + ":" + sequence);
    }

    @Override
    public void ack(Object msgId) {
        latency.acked(msgId);
    }

    @Override
    public void fail(Object msgId) {
        latency.failed(msgId);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(FIELDS);
    }
}
