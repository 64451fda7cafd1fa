package io.github.kinesisshellspout.example.bench;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.spout.ShellSpout;
import org.apache.storm.topology.IRichSpout;
import org.apache.storm.topology.OutputFieldsDeclarer;

/**
 * A plain ShellSpout running a given command (storm.js, or the spout's script with a synthetic source) with
 * the given environment and component configuration, declaring the default fields.
 */
public class BenchShellSpout extends ShellSpout implements IRichSpout {
    private static final long serialVersionUID = 1L;
    private final HashMap<String, Object> componentConf;

    public BenchShellSpout(List<String> command, Map<String, String> env, Map<String, Object> componentConf) {
        super(command.toArray(new String[0]));
        setEnv(new HashMap<>(env));
        this.componentConf = new HashMap<>(componentConf);
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
