package io.github.kinesisshellspout;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.storm.multilang.BoltMsg;
import org.apache.storm.multilang.ISerializer;
import org.apache.storm.multilang.JsonSerializer;
import org.apache.storm.multilang.NoOutputException;
import org.apache.storm.multilang.ShellMsg;
import org.apache.storm.multilang.SpoutMsg;
import org.apache.storm.shade.net.minidev.json.JSONObject;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.apache.storm.shade.net.minidev.json.parser.ParseException;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.utils.Utils;

/**
 * The compact wire format ({@code compact-2}, see the project's docs/design.md) between a
 * {@link KinesisShellSpout} task and its process: length-prefixed binary frames with typed values,
 * and the acks Storm sends one at a time carried, while the spout is active, ahead of its next command
 * (up to {@link #MAX_DEFERRED_ACKS}, or {@link #MAX_DEFER_MS}): each deferred ack is answered here at
 * once, one real round trip serves many.
 *
 * <p>It speaks compact only to a process of this project: when the conf it is given holds the
 * {@code kinesis.spout} map, it offers the format in the handshake ({@code kinesis.spout.wire}) and
 * uses it only if the process accepts it in its pid reply. Anything else (another multilang component,
 * when a topology sets this class as {@code topology.multilang.serializer}; a process that does not
 * accept) gets Storm's JSON serializer, call for call.
 */
public class CompactSerializer implements ISerializer {
    private static final long serialVersionUID = 1L;

    public static final String WIRE_CONF_KEY = "kinesis.spout.wire";
    public static final String COMPACT_WIRE = "compact-2";
    static final int MAX_DEFERRED_ACKS = 64;
    static final long MAX_DEFER_MS = 100;
    static final int MAX_BODY_BYTES = 64 * 1024 * 1024;

    private transient OutputStream processIn;
    private transient InputStream processOut;
    /** Storm's JSON serializer, when the process does not speak compact. */
    private transient ISerializer json;
    private transient DataInputStream in;
    private transient CompactFrames frames;
    private transient List<Object> deferred;
    private transient long deferredSince;
    private transient boolean active;
    /** An ack was deferred: its sync is answered here. */
    private transient boolean syncOwed;

    @Override
    public void initialize(OutputStream processIn, InputStream processOut) {
        this.processIn = processIn;
        this.processOut = processOut;
    }

    /** Whether the conf is a Kinesis spout's (its process can speak compact). */
    static boolean isKinesisSpout(Map<String, Object> conf) {
        return conf.get(KinesisShellSpout.CONF_KEY) instanceof Map;
    }

    @Override
    public Number connect(Map<String, Object> conf, TopologyContext context) throws IOException, NoOutputException {
        if (!isKinesisSpout(conf)) {
            json = jsonSerializer();
            json.initialize(processIn, processOut);
            return json.connect(conf, context);
        }
        return handshake(conf, context.getPIDDir(), context);
    }

    /**
     * The handshake as Storm's JSON serializer sends it, the offer added; the format as the reply says.
     * Public for drivers without a TopologyContext (benchmarks): {@code context} is anything JSON-able.
     */
    public Number handshake(Map<String, Object> conf, String pidDir, Object context) throws IOException, NoOutputException {
        Map<String, Object> offered = new HashMap<>(conf);
        offered.put(WIRE_CONF_KEY, List.of(COMPACT_WIRE));
        JSONObject setup = new JSONObject();
        setup.put("pidDir", pidDir);
        setup.put("conf", offered);
        setup.put("context", context);
        processIn.write((JSONValue.toJSONString(setup) + "\nend\n").getBytes(StandardCharsets.UTF_8));
        processIn.flush();
        // Read a byte at a time: whatever follows the pid is not ours to buffer if it is JSON.
        Object reply;
        try {
            reply = JSONValue.parseWithException(readJsonFrame(processOut));
        } catch (ParseException e) {
            throw new IOException("the process's reply to the handshake is not JSON", e);
        }
        if (!(reply instanceof JSONObject obj) || !(obj.get("pid") instanceof Number pid)) {
            throw new IOException("the process's reply to the handshake carries no pid: " + reply);
        }
        if (COMPACT_WIRE.equals(obj.get("wire"))) {
            in = new DataInputStream(new java.io.BufferedInputStream(processOut, 64 * 1024));
            frames = new CompactFrames();
            deferred = new ArrayList<>();
        } else {
            json = jsonSerializer();
            json.initialize(processIn, processOut);
        }
        return pid;
    }

    /** Whether the process accepted the compact format (false before the handshake). */
    boolean isCompact() {
        return frames != null;
    }

    /** Storm's JSON serializer, or the one that keeps log levels where Storm's drops them. */
    private static ISerializer jsonSerializer() {
        return LogLevelJsonSerializer.STORM_DROPS_LEVELS ? new LogLevelJsonSerializer() : new JsonSerializer();
    }

    private static String readJsonFrame(InputStream stream) throws IOException, NoOutputException {
        ByteArrayOutputStream frame = new ByteArrayOutputStream();
        int lineStart = 0;
        for (;;) {
            int b = stream.read();
            if (b < 0) {
                throw new NoOutputException("Pipe to subprocess seems to be broken! No pid read. Read: "
                    + frame.toString(StandardCharsets.UTF_8));
            }
            if (b == '\n') {
                byte[] bytes = frame.toByteArray();
                String line = new String(bytes, lineStart, bytes.length - lineStart, StandardCharsets.UTF_8);
                if (line.equals("end")) {
                    return new String(bytes, 0, Math.max(0, lineStart - 1), StandardCharsets.UTF_8);
                }
                frame.write(b);
                lineStart = bytes.length + 1;
            } else {
                frame.write(b);
            }
        }
    }

    @Override
    public ShellMsg readShellMsg() throws IOException, NoOutputException {
        if (json != null) {
            return json.readShellMsg();
        }
        if (syncOwed) {
            syncOwed = false;
            ShellMsg sync = new ShellMsg();
            sync.setCommand("sync");
            return sync;
        }
        int tag = in.read();
        if (tag < 0) {
            throw new NoOutputException("Pipe to subprocess seems to be broken! (compact format, between frames)");
        }
        int length;
        byte[] body;
        try {
            length = in.readInt();
            if (length < 0 || length > MAX_BODY_BYTES) {
                throw new IOException(String.format(
                    "compact multilang frame from the process: tag 0x%02x, body length %d: the stream is corrupt",
                    tag, length & 0xffffffffL));
            }
            body = new byte[length];
            in.readFully(body);
        } catch (EOFException e) {
            throw new NoOutputException("Pipe to subprocess seems to be broken! (compact format, inside a frame)");
        }
        try {
            return CompactFrames.parseReply(tag, body);
        } catch (IOException | RuntimeException e) {
            String why = e instanceof java.nio.BufferUnderflowException ? "the frame ends early" : e.getMessage();
            String head = HexFormat.of().formatHex(body, 0, Math.min(body.length, 64));
            throw new IOException(String.format("compact multilang frame from the process does not parse "
                + "(tag 0x%02x, %d bytes: %s): %s", tag, body.length, head, why), e);
        }
    }

    @Override
    public void writeSpoutMsg(SpoutMsg msg) throws IOException {
        if (json != null) {
            json.writeSpoutMsg(msg);
            return;
        }
        String command = msg.getCommand();
        switch (command) {
            case "ack" -> {
                long now = System.nanoTime();
                if (deferred.isEmpty()) {
                    deferredSince = now;
                }
                deferred.add(msg.getId());
                if (active && deferred.size() < MAX_DEFERRED_ACKS && now - deferredSince < MAX_DEFER_MS * 1_000_000L) {
                    syncOwed = true;
                    return;
                }
                send(CompactFrames.ACKS, null, false);
            }
            case "next" -> send(CompactFrames.NEXT, null, false);
            case "fail" -> send(CompactFrames.FAIL, msg.getId(), true);
            case "activate" -> {
                active = true;
                send(CompactFrames.ACTIVATE, null, false);
            }
            case "deactivate" -> {
                // No next comes while deactivated: from now on every ack goes at once.
                active = false;
                send(CompactFrames.DEACTIVATE, null, false);
            }
            default -> throw new IOException("the compact format has no spout command \"" + command + "\"");
        }
    }

    private void send(int tag, Object id, boolean withId) throws IOException {
        frames.command(tag, deferred, id, withId);
        deferred.clear();
        frames.writeTo(processIn);
    }

    @Override
    public void writeTaskIds(List<Integer> taskIds) throws IOException {
        if (json != null) {
            json.writeTaskIds(taskIds);
            return;
        }
        frames.taskIds(taskIds);
        frames.writeTo(processIn);
    }

    @Override
    public void writeBoltMsg(BoltMsg msg) throws IOException {
        if (json != null) {
            json.writeBoltMsg(msg);
            return;
        }
        throw new IOException("the compact multilang format serves the Kinesis spout only, not bolts");
    }

    /** The stream of an emit whose frame names none. */
    static final String DEFAULT_STREAM = Utils.DEFAULT_STREAM_ID;
}
