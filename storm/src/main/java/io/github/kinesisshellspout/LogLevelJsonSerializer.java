package io.github.kinesisshellspout;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Map;
import org.apache.storm.multilang.JsonSerializer;
import org.apache.storm.multilang.NoOutputException;
import org.apache.storm.multilang.ShellMsg;
import org.apache.storm.shade.net.minidev.json.JSONObject;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.apache.storm.task.TopologyContext;

/**
 * Storm's {@link JsonSerializer}, but the level of a {@code log} command is honoured. Storm 2.6.x and
 * 2.7.x parse frames with json-smart, which gives a small number as an {@code Integer}, and take the level
 * only if it is a {@code Long}: every line of the spout was logged at INFO, its warnings and errors too
 * (apache/storm#7954, fixed in 2.8.0). {@link KinesisShellSpout} uses this serializer only where Storm's
 * own drops the level ({@link #STORM_DROPS_LEVELS}).
 *
 * <p>Storm's serializer reads every frame; this one watches the same bytes go by, and for each frame that
 * is a log command reads its level, to set it on the message Storm's serializer made of that frame.
 */
public class LogLevelJsonSerializer extends JsonSerializer {
    private static final long serialVersionUID = 1L;

    /** Whether this Storm's JsonSerializer logs a level-4 (ERROR) log command at another level. */
    static final boolean STORM_DROPS_LEVELS = dropsLevels();

    private transient FrameLevels levels;

    @Override
    public void initialize(OutputStream processIn, InputStream processOut) {
        levels = new FrameLevels(processOut);
        super.initialize(processIn, levels);
    }

    @Override
    public Number connect(Map<String, Object> conf, TopologyContext context) throws IOException, NoOutputException {
        Number pid = super.connect(conf, context);
        levels.next(); // the pid's frame
        return pid;
    }

    @Override
    public ShellMsg readShellMsg() throws IOException, NoOutputException {
        ShellMsg msg = super.readShellMsg();
        int level = levels.next();
        if (level >= 0 && "log".equals(msg.getCommand())) {
            msg.setLogLevel(level);
        }
        return msg;
    }

    private static boolean dropsLevels() {
        try {
            JsonSerializer storms = new JsonSerializer();
            byte[] frame = "{\"command\":\"log\",\"msg\":\"probe\",\"level\":4}\nend\n".getBytes(StandardCharsets.UTF_8);
            storms.initialize(OutputStream.nullOutputStream(), new ByteArrayInputStream(frame));
            return storms.readShellMsg().getLogLevel() != ShellMsg.ShellLogLevel.ERROR;
        } catch (IOException | NoOutputException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Passes the subprocess's output through unchanged, cutting it into frames as Storm does (lines up to
     * one that is {@code end}); for each frame, in order, the level of a log command, or -1.
     */
    static final class FrameLevels extends FilterInputStream {
        private static final byte[] LOG_PREFIX = "{\"command\":\"log\"".getBytes(StandardCharsets.UTF_8);
        private static final byte[] END = "end".getBytes(StandardCharsets.UTF_8);
        private final ArrayDeque<Integer> completed = new ArrayDeque<>();
        /** The frame so far, kept only while it can be a log command: an emit is never copied. */
        private final ByteArrayOutputStream logFrame = new ByteArrayOutputStream();
        private long frameLength;
        private boolean frameIsLog = true;
        private int lineLength;
        private boolean lineIsEnd = true;

        FrameLevels(InputStream in) {
            super(in);
        }

        /** The level of the oldest frame not yet taken, -1 if it is not a log command (or none was read). */
        synchronized int next() {
            Integer level = completed.poll();
            return level == null ? -1 : level;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                see((byte) b);
            }
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            for (int i = 0; i < n; i++) {
                see(buffer[offset + i]);
            }
            return n;
        }

        private synchronized void see(byte b) {
            if (b == '\n') {
                if (lineIsEnd && lineLength == END.length) {
                    completed.add(frameIsLog && frameLength > LOG_PREFIX.length + END.length ? levelOf() : -1);
                    logFrame.reset();
                    frameLength = 0;
                    frameIsLog = true;
                } else {
                    frame(b);
                }
                lineLength = 0;
                lineIsEnd = true;
                return;
            }
            lineIsEnd = lineIsEnd && lineLength < END.length && END[lineLength] == b;
            lineLength++;
            frame(b);
        }

        private void frame(byte b) {
            if (frameIsLog && frameLength < LOG_PREFIX.length) {
                frameIsLog = LOG_PREFIX[(int) frameLength] == b;
            }
            frameLength++;
            if (frameIsLog) {
                logFrame.write(b);
            }
        }

        /** The frame's text less its closing line ("\nend", fed in before it was known to close it). */
        private int levelOf() {
            byte[] bytes = logFrame.toByteArray();
            String body = new String(bytes, 0, bytes.length - END.length - 1, StandardCharsets.UTF_8);
            Object parsed = JSONValue.parse(body);
            if (parsed instanceof JSONObject json && json.get("level") instanceof Number level) {
                return level.intValue();
            }
            return -1;
        }
    }
}
