package io.github.kinesisshellspout.example;

import io.github.kinesisshellspout.KinesisShellSpout;
import io.github.kinesisshellspout.KinesisShellSpoutBuilder;
import java.nio.file.Path;
import java.util.List;
import org.apache.storm.Config;
import org.apache.storm.StormSubmitter;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.topology.BoltDeclarer;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;

/**
 * Kinesis spout, then a bolt recording every tuple, then a bolt acking (or failing some first deliveries).
 *
 * <pre>
 * storm jar kinesis-topology-example-0.1.0.jar io.github.kinesisshellspout.example.KinesisTopology remote config.json
 * java -cp kinesis-topology-example-0.1.0.jar:$(cat classpath.txt) io.github.kinesisshellspout.example.KinesisTopology local config.json
 * </pre>
 */
public final class KinesisTopology {
    public static final String SPOUT = "kinesis";
    public static final String RECORDER = "record";
    public static final String ACKER = "ack";

    private KinesisTopology() {
    }

    public static StormTopology build(ExampleConfig config) {
        TopologyBuilder builder = new TopologyBuilder();
        // What a topology needs to read Kinesis: this line (and the kinesis-shell-spout dependency).
        KinesisShellSpout spout = new KinesisShellSpout(config.spoutConf());
        if (!config.registerJsonTypes() || config.fanOut() != null) {
            KinesisShellSpoutBuilder options = KinesisShellSpout.builder().setAll(config.spoutConf());
            if (!config.registerJsonTypes()) {
                options.withoutJsonKryoRegistrations();
            }
            if (config.fanOut() != null) {
                // Enhanced fan-out through this stream consumer, registered by the spout at its first start.
                options.fanOut(config.fanOut());
            }
            spout = options.build();
        }
        if (config.declaredFields() != null) {
            spout = new MisdeclaredSpout(config.spoutConf(), config.declaredFields());
        }
        if (config.compactSerializer()) {
            spout.useCompactSerializer();
        }
        builder.setSpout(SPOUT, spout, config.spoutParallelism()).setNumTasks(config.spoutTasks());
        BoltDeclarer recorder = builder.setBolt(RECORDER, new RecordingBolt(config.outputFile()), config.boltParallelism());
        List<String> fields = config.declaredFields() != null ? config.declaredFields() : spout.outputFields();
        subscribe(recorder, SPOUT, spout, fields, config.groupByPartitionKey());
        for (ExampleConfig.SpoutSpec more : config.moreSpouts()) {
            KinesisShellSpout another = new KinesisShellSpout(more.spoutConf());
            if (more.compactSerializer()) {
                another.useCompactSerializer();
            }
            builder.setSpout(more.name(), another, more.parallelism()).setNumTasks(more.tasks());
            subscribe(recorder, more.name(), another, another.outputFields(), config.groupByPartitionKey());
        }
        AckBolt acker = config.failFraction() > 0
            ? new FailingBolt(config.failFraction(), config.outputFile())
            : config.holdAcksUntil() != null ? new HoldingBolt(config.holdAcksUntil()) : new AckBolt();
        // By id, so each record meets the same acking task on every replay and fails at most once.
        builder.setBolt(ACKER, acker, config.boltParallelism()).fieldsGrouping(RECORDER, new Fields("id"));
        return builder.createTopology();
    }

    /**
     * The recorder takes a spout's records from component {@code id}, on each of its output streams (one per
     * Kinesis stream's {@code outputStream} when it reads several), and its dead letters when it has them.
     */
    private static void subscribe(BoltDeclarer recorder, String id, KinesisShellSpout spout, List<String> fields, boolean byKey) {
        for (String stream : spout.outputStreams()) {
            if (byKey && fields.contains("partitionKey")) {
                // One recorder task per key, so the file shows each key's tuples in the order they were emitted.
                recorder.fieldsGrouping(id, stream, new Fields("partitionKey"));
            } else {
                recorder.shuffleGrouping(id, stream);
            }
        }
        if (spout.deadLetterStream() != null) {
            // Dead letters are recorded too (unanchored, so nothing to ack downstream).
            recorder.shuffleGrouping(id, spout.deadLetterStream());
        }
    }

    public static Config topologyConf(ExampleConfig config) {
        Config conf = new Config();
        conf.setNumWorkers(config.workers());
        conf.putAll(config.stormConf());
        return conf;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[0].equals("local") || args[0].equals("remote"))) {
            System.err.println("usage: KinesisTopology local|remote <config.json>");
            System.exit(2);
        }
        ExampleConfig config = ExampleConfig.load(Path.of(args[1]));
        StormTopology topology = build(config);
        Config conf = topologyConf(config);
        if (args[0].equals("remote")) {
            StormSubmitter.submitTopologyWithProgressBar(config.topologyName(), conf, topology);
        } else {
            // A separate class, so that `remote` never loads LocalCluster (absent from a cluster's classpath).
            LocalRunner.run(config.topologyName(), conf, topology, config.localSeconds(), config.localClusterConf());
        }
    }
}
