package io.github.kinesisshellspout;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.metric.api.rpc.IShellMetric;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One metric the spout process reports with the multilang {@code metrics} command. Each frame's params
 * are {@code {"counters": {key: delta}, "gauges": {key: value}}}: counters are what happened since the
 * process's previous frame, so they add up until Storm collects them; gauges are the current state, so
 * each frame's map replaces the previous one whole (a shard no longer held disappears).
 *
 * <p>Storm collects with {@link #getValueAndReset()} on the executor thread, while frames arrive on the
 * thread reading the process, hence the locking.
 */
public class KinesisShellMetric implements IShellMetric {
    private static final Logger LOG = LoggerFactory.getLogger(KinesisShellMetric.class);

    private final String name;
    private final Map<String, Number> counters = new HashMap<>();
    private Map<String, Number> gauges = new HashMap<>();

    public KinesisShellMetric(String name) {
        this.name = name;
    }

    /**
     * Never throws: Storm kills the worker on an exception here, and a malformed frame is not worth a
     * worker. What cannot be read is logged and left out; what can is kept.
     */
    @Override
    public synchronized void updateMetricFromRPC(Object params) {
        if (!(params instanceof Map)) {
            LOG.warn("metric {}: ignored params {}: expected an object with \"counters\" and \"gauges\"", name, params);
            return;
        }
        Map<?, ?> frame = (Map<?, ?>) params;
        Map<String, Number> deltas = numbers(frame.get("counters"), "counters");
        if (deltas != null) {
            deltas.forEach((key, delta) -> counters.merge(key, delta, KinesisShellMetric::sum));
        }
        Map<String, Number> current = numbers(frame.get("gauges"), "gauges");
        if (current != null) {
            gauges = current;
        }
    }

    /** The gauges and the counters summed since the last call, sorted by key; the counters start again from zero. */
    @Override
    public synchronized Object getValueAndReset() {
        Map<String, Number> value = new TreeMap<>(gauges);
        value.putAll(counters);
        counters.clear();
        return value;
    }

    /** The numeric entries of {@code section}; null if it is absent or not an object. */
    private Map<String, Number> numbers(Object section, String sectionName) {
        if (section == null) {
            return null;
        }
        if (!(section instanceof Map)) {
            LOG.warn("metric {}: ignored \"{}\" = {}: expected an object of numbers", name, sectionName, section);
            return null;
        }
        Map<String, Number> numbers = new HashMap<>();
        for (Map.Entry<?, ?> entry : ((Map<?, ?>) section).entrySet()) {
            if (entry.getValue() instanceof Number number && isFinite(number)) {
                numbers.put(String.valueOf(entry.getKey()), normalized(number));
            } else {
                LOG.warn("metric {}: ignored {}.{} = {}: not a number", name, sectionName, entry.getKey(), entry.getValue());
            }
        }
        return numbers;
    }

    private static boolean isFinite(Number number) {
        return !(number instanceof Double || number instanceof Float) || Double.isFinite(number.doubleValue());
    }

    /**
     * Long for whole numbers (json-smart gives Integer or Long), Double for the rest: one type per kind, so
     * that consumers compare and sum values without caring what the parser chose.
     */
    private static Number normalized(Number n) {
        if (isWhole(n)) {
            return n.longValue(); // not a conditional expression: it would widen the Long to a double
        }
        return n.doubleValue();
    }

    private static Number sum(Number a, Number b) {
        if (a instanceof Long && b instanceof Long) {
            return a.longValue() + b.longValue();
        }
        return a.doubleValue() + b.doubleValue();
    }

    private static boolean isWhole(Number n) {
        return n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte;
    }
}
