package io.github.kinesisshellspout.example.bench;

import io.github.kinesisshellspout.KinesisShellSpout;
import java.util.Map;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;

/** The {@link KinesisShellSpout} as users get it, each tuple tree timed ({@link CompleteLatency}). */
public class BenchKinesisSpout extends KinesisShellSpout {
    private static final long serialVersionUID = 1L;
    private transient CompleteLatency latency;

    public BenchKinesisSpout(Map<String, Object> spoutConf) {
        super(spoutConf);
    }

    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        latency = new CompleteLatency();
        super.open(conf, context, latency.wrap(collector));
    }

    @Override
    public void ack(Object msgId) {
        latency.acked(msgId);
        super.ack(msgId);
    }

    @Override
    public void fail(Object msgId) {
        latency.failed(msgId);
        super.fail(msgId);
    }
}
