package io.github.kinesisshellspout.example.bench;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.spout.ShellSpout;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.IRichSpout;
import org.apache.storm.topology.OutputFieldsDeclarer;

/**
 * A plain ShellSpout running a given command (storm.js, or the spout's script with a synthetic source) with
 * the given environment and component configuration, declaring the default fields, and timing each
 * tuple tree ({@link CompleteLatency}).
 */
public class BenchShellSpout extends ShellSpout implements IRichSpout {
    private static final long serialVersionUID = 1L;
    private final HashMap<String, Object> componentConf;
    private transient CompleteLatency latency;

    public BenchShellSpout(List<String> command, Map<String, String> env, Map<String, Object> componentConf) {
        super(command.toArray(new String[0]));
        setEnv(new HashMap<>(env));
        this.componentConf = new HashMap<>(componentConf);
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

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(NativeSpout.FIELDS);
    }

    @Override
    public Map<String, Object> getComponentConfiguration() {
        return componentConf;
    }
}
