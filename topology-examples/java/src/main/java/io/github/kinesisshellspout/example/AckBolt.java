package io.github.kinesisshellspout.example;

import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;

/** The end of the tuple tree: acks every tuple, which lets the spout move its checkpoint. */
public class AckBolt extends BaseRichBolt {
    protected OutputCollector collector;
    protected TopologyContext context;

    @Override
    public void prepare(Map<String, Object> topoConf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        this.context = context;
    }

    @Override
    public void execute(Tuple tuple) {
        if (shouldFail(tuple)) {
            collector.fail(tuple);
        } else {
            collector.ack(tuple);
        }
    }

    protected boolean shouldFail(Tuple tuple) {
        return false;
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
    }
}
