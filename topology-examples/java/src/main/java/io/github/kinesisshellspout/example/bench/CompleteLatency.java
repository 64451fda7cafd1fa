package io.github.kinesisshellspout.example.bench;

import java.util.HashMap;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.apache.storm.spout.ISpoutOutputCollector;
import org.apache.storm.spout.SpoutOutputCollector;

/**
 * The complete latency of every tuple tree, timed in the spout itself: from the emit through the spout's
 * collector to the spout's {@code ack} (Storm's definition of complete latency), in nanoseconds. Storm's
 * own figure cannot serve a benchmark: its V2 gauge {@code __complete-latency-default} is the average of
 * the last three sampled trees only ({@code RollingAverageGauge}), sampled at
 * {@code topology.stats.sample.rate} (5 % by default), each in whole milliseconds.
 *
 * <p>One per spout task; the spout's executor thread both emits and acks, so the map needs no lock. The
 * totals are static (LocalCluster runs every topology in the benchmark's one JVM), read by its
 * {@code count} command.
 */
final class CompleteLatency {
    static final LongAdder NANOS = new LongAdder();
    static final LongAdder TREES = new LongAdder();

    private final HashMap<Object, Long> emittedAt = new HashMap<>();

    /** The collector to give the spout: {@code collector}, with the emit time of every anchored tuple kept. */
    SpoutOutputCollector wrap(SpoutOutputCollector collector) {
        return new SpoutOutputCollector(new ISpoutOutputCollector() {
            @Override
            public List<Integer> emit(String streamId, List<Object> tuple, Object messageId) {
                if (messageId != null) {
                    emittedAt.put(messageId, System.nanoTime());
                }
                return collector.emit(streamId, tuple, messageId);
            }

            @Override
            public void emitDirect(int taskId, String streamId, List<Object> tuple, Object messageId) {
                if (messageId != null) {
                    emittedAt.put(messageId, System.nanoTime());
                }
                collector.emitDirect(taskId, streamId, tuple, messageId);
            }

            @Override
            public long getPendingCount() {
                return collector.getPendingCount();
            }

            @Override
            public void flush() {
                collector.flush();
            }

            @Override
            public void reportError(Throwable error) {
                collector.reportError(error);
            }
        });
    }

    /** Storm acked the tree of {@code messageId}: its latency is counted. */
    void acked(Object messageId) {
        Long at = emittedAt.remove(messageId);
        if (at != null) {
            NANOS.add(System.nanoTime() - at);
            TREES.increment();
        }
    }

    /** Storm failed it (or it timed out): not a complete latency, forgotten. */
    void failed(Object messageId) {
        emittedAt.remove(messageId);
    }
}
