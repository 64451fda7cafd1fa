package io.github.kinesisshellspout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KinesisShellMetricTest {
    private static Map<String, Object> frame(Map<String, Object> counters, Map<String, Object> gauges) {
        Map<String, Object> params = new HashMap<>();
        if (counters != null) {
            params.put("counters", counters);
        }
        if (gauges != null) {
            params.put("gauges", gauges);
        }
        return params;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Number> collect(KinesisShellMetric metric) {
        return (Map<String, Number>) metric.getValueAndReset();
    }

    @Test
    void countersAreSummedOverFramesUntilCollected() {
        KinesisShellMetric metric = new KinesisShellMetric("kinesis-spout");
        metric.updateMetricFromRPC(frame(Map.of("emitted", 3, "acked", 1), null));
        metric.updateMetricFromRPC(frame(Map.of("emitted", 4L), null));
        metric.updateMetricFromRPC(frame(Map.of("emitted", 5), null));
        Map<String, Number> value = collect(metric);
        assertEquals(Map.of("emitted", 12L, "acked", 1L), value);
        assertInstanceOf(Long.class, value.get("emitted"));
    }

    @Test
    void fractionalCountersSumAsDoubles() {
        KinesisShellMetric metric = new KinesisShellMetric("m");
        metric.updateMetricFromRPC(frame(Map.of("x", 1), null));
        metric.updateMetricFromRPC(frame(Map.of("x", 0.5), null));
        assertEquals(Map.of("x", 1.5), collect(metric));
    }

    @Test
    void gaugesAreReplacedWholeSoAShardNoLongerHeldDisappears() {
        KinesisShellMetric metric = new KinesisShellMetric("kinesis-spout-shards");
        metric.updateMetricFromRPC(frame(null, Map.of("shardId-0.millisBehindLatest", 100, "shardId-1.millisBehindLatest", 200)));
        metric.updateMetricFromRPC(frame(null, Map.of("shardId-1.millisBehindLatest", 50)));
        assertEquals(Map.of("shardId-1.millisBehindLatest", 50L), collect(metric));
    }

    @Test
    void aFrameWithoutGaugesKeepsThePreviousOnes() {
        KinesisShellMetric metric = new KinesisShellMetric("m");
        metric.updateMetricFromRPC(frame(null, Map.of("shardsHeld", 2)));
        metric.updateMetricFromRPC(frame(Map.of("emitted", 1), null));
        assertEquals(Map.of("shardsHeld", 2L, "emitted", 1L), collect(metric));
    }

    @Test
    void collectingResetsTheCountersAndKeepsTheGauges() {
        KinesisShellMetric metric = new KinesisShellMetric("m");
        metric.updateMetricFromRPC(frame(Map.of("emitted", 7), Map.of("shardsHeld", 3)));
        assertEquals(Map.of("emitted", 7L, "shardsHeld", 3L), collect(metric));
        assertEquals(Map.of("shardsHeld", 3L), collect(metric));
        metric.updateMetricFromRPC(frame(Map.of("emitted", 2), null));
        assertEquals(Map.of("emitted", 2L, "shardsHeld", 3L), collect(metric));
    }

    @Test
    void theValueIsSortedByKey() {
        KinesisShellMetric metric = new KinesisShellMetric("m");
        metric.updateMetricFromRPC(frame(Map.of("b", 1, "d", 1), Map.of("c", 1, "a", 1)));
        assertEquals(List.of("a", "b", "c", "d"), List.copyOf(collect(metric).keySet()));
    }

    @Test
    void badParamsAreIgnoredNeverThrown() {
        KinesisShellMetric metric = new KinesisShellMetric("m");
        metric.updateMetricFromRPC(frame(Map.of("emitted", 1), Map.of("shardsHeld", 1)));
        metric.updateMetricFromRPC(null);
        metric.updateMetricFromRPC("not a map");
        metric.updateMetricFromRPC(List.of(1, 2));
        Map<String, Object> wrongSections = new HashMap<>();
        wrongSections.put("counters", List.of(1));
        wrongSections.put("gauges", "nope");
        metric.updateMetricFromRPC(wrongSections);
        assertEquals(Map.of("emitted", 1L, "shardsHeld", 1L), collect(metric));
    }

    @Test
    void nonNumbersAreLeftOutAndTheRestKept() {
        KinesisShellMetric metric = new KinesisShellMetric("m");
        Map<String, Object> counters = new HashMap<>();
        counters.put("emitted", 2);
        counters.put("acked", "3");
        counters.put("failed", null);
        counters.put("retried", true);
        counters.put("skipped", Double.NaN);
        Map<String, Object> gauges = new HashMap<>();
        gauges.put("shardsHeld", 1);
        gauges.put("zookeeperConnected", Map.of());
        metric.updateMetricFromRPC(frame(counters, gauges));
        assertEquals(Map.of("emitted", 2L, "shardsHeld", 1L), collect(metric));
    }
}
