package io.github.kinesisshellspout.example;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.utils.TupleUtils;

/**
 * Holds every tuple, unacked, until a file exists, then acks what it held and every later tuple at once.
 * While it holds, a spout whose tuples carry message ids stops at {@code topology.max.spout.pending}
 * (their trees stay incomplete), and one emitting without ids does not (Storm tracks nothing of it).
 * The file is looked for at each tuple and at a tick every second, so the release needs no new tuple.
 */
public class HoldingBolt extends AckBolt {
    private final String releaseFile;
    private transient List<Tuple> held;
    private transient boolean released;

    public HoldingBolt(String releaseFile) {
        this.releaseFile = releaseFile;
    }

    @Override
    public void prepare(Map<String, Object> topoConf, TopologyContext context, OutputCollector collector) {
        super.prepare(topoConf, context, collector);
        held = new ArrayList<>();
    }

    @Override
    public void execute(Tuple tuple) {
        if (!released && Files.exists(Path.of(releaseFile))) {
            released = true;
            held.forEach(collector::ack);
            held.clear();
        }
        if (TupleUtils.isTick(tuple)) {
            return;
        }
        if (released) {
            collector.ack(tuple);
        } else {
            held.add(tuple);
        }
    }

    @Override
    public Map<String, Object> getComponentConfiguration() {
        return Map.of(Config.TOPOLOGY_TICK_TUPLE_FREQ_SECS, 1);
    }
}
