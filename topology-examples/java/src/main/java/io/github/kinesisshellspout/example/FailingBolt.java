package io.github.kinesisshellspout.example;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.tuple.Tuple;

/**
 * Fails the first delivery of a fixed share of the records, and acks everything else, so replays are
 * exercised and every record still ends acked. Which records fail depends only on the message id, so a
 * run is reproducible; the topology routes each id to one task (fields grouping), so a record fails once
 * (once per spout component, when several read the same stream).
 */
public class FailingBolt extends AckBolt {
    private final double failFraction;
    private final String outputFile;
    private transient Set<String> failed;
    private transient Recorder recorder;

    public FailingBolt(double failFraction, String outputFile) {
        this.failFraction = failFraction;
        this.outputFile = outputFile;
    }

    /** Whether a record's first delivery fails; the e2e test recomputes it from the id. */
    public static boolean selected(String id, double failFraction) {
        return !id.isEmpty() && Math.floorMod(id.hashCode(), 1000) < Math.round(failFraction * 1000);
    }

    @Override
    public void prepare(Map<String, Object> topoConf, TopologyContext context, OutputCollector collector) {
        super.prepare(topoConf, context, collector);
        failed = new HashSet<>();
        recorder = new Recorder(outputFile);
    }

    @Override
    protected boolean shouldFail(Tuple tuple) {
        String id = tuple.getStringByField("id");
        String component = tuple.getStringByField("component");
        if (!selected(id, failFraction) || !failed.add(component + " " + id)) {
            return false;
        }
        recorder.record(Map.of("event", "failed", "id", id, "component", component, "task", context.getThisTaskId()));
        return true;
    }

    @Override
    public void cleanup() {
        recorder.close();
    }
}
