package io.github.kinesisshellspout.example;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.storm.metric.api.IMetricsConsumer;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.apache.storm.task.IErrorReporter;
import org.apache.storm.task.TopologyContext;

/**
 * A metrics consumer writing what it receives, one JSON line per data point, to the file named by its
 * registration argument ({@code topology.metrics.consumer.register}); without an argument it logs them.
 * Shows what the spout reports (metrics {@code kinesis-spout} and {@code kinesis-spout-shards}):
 *
 * <pre>
 * "storm": {"topology.metrics.consumer.register": [{"class": "io.github.kinesisshellspout.example.MetricsRecorder",
 *                                                    "parallelism.hint": 1, "argument": "/tmp/metrics.jsonl"}]}
 * </pre>
 */
public class MetricsRecorder implements IMetricsConsumer {
    private FileOutputStream out;

    @Override
    public void prepare(Map<String, Object> topoConf, Object argument, TopologyContext context, IErrorReporter errorReporter) {
        try {
            // Appending, one write per line: consumer tasks in other workers never interleave within a line.
            out = argument == null ? null : new FileOutputStream(argument.toString(), true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void handleDataPoints(TaskInfo task, Collection<DataPoint> dataPoints) {
        for (DataPoint point : dataPoints) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("component", task.srcComponentId);
            line.put("task", task.srcTaskId);
            line.put("worker", task.srcWorkerPort);
            line.put("timestamp", task.timestamp);
            line.put("name", point.name);
            line.put("value", point.value);
            write(JSONValue.toJSONString(line));
        }
    }

    private void write(String line) {
        if (out == null) {
            System.out.println("metrics: " + line);
            return;
        }
        try {
            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void cleanup() {
        try {
            if (out != null) {
                out.close();
            }
        } catch (IOException e) {
            // nothing more to write
        }
    }
}
