package io.github.kinesisshellspout.example;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends one JSON line per event to a file shared by every task (and worker) on the host, or logs it
 * when no file is configured. Each line is a single write to a file opened in append mode, so lines
 * from different tasks never interleave, and nothing waits in a buffer if the JVM is killed.
 */
final class Recorder {
    private static final Logger LOG = LoggerFactory.getLogger(Recorder.class);
    private final FileOutputStream out;

    Recorder(String path) {
        try {
            out = path == null ? null : new FileOutputStream(path, true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open " + path, e);
        }
    }

    void record(Map<String, ?> event) {
        String line = JSONValue.toJSONString(event);
        if (out == null) {
            LOG.info(line);
            return;
        }
        try {
            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void close() {
        try {
            if (out != null) {
                out.close();
            }
        } catch (IOException e) {
            LOG.warn("closing the output file", e);
        }
    }
}
