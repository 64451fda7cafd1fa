package io.github.kinesisshellspout.example;

import io.github.kinesisshellspout.KinesisShellSpout;
import java.util.List;
import java.util.Map;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.tuple.Fields;

/**
 * The spout declaring other fields than its {@code outputFields}: a configuration error, which the
 * spout process must report through Storm at start (an end-to-end test checks it does).
 */
final class MisdeclaredSpout extends KinesisShellSpout {
    private static final long serialVersionUID = 1L;
    private final List<String> fields;

    MisdeclaredSpout(Map<String, Object> spoutConf, List<String> fields) {
        super(spoutConf);
        this.fields = List.copyOf(fields);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declareStream(outputStream(), new Fields(fields));
    }
}
