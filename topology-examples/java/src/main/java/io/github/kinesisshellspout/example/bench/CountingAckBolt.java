package io.github.kinesisshellspout.example.bench;

import java.util.concurrent.atomic.LongAdder;
import io.github.kinesisshellspout.example.AckBolt;
import org.apache.storm.tuple.Tuple;

/** Acks every tuple and counts it, in a counter the benchmark's runner reads (LocalCluster: one JVM). */
public class CountingAckBolt extends AckBolt {
    private static final long serialVersionUID = 1L;
    static final LongAdder ACKED = new LongAdder();

    @Override
    public void execute(Tuple tuple) {
        collector.ack(tuple);
        ACKED.increment();
    }
}
