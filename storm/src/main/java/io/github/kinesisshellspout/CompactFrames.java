package io.github.kinesisshellspout;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.storm.multilang.ShellMsg;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.apache.storm.shade.net.minidev.json.parser.ParseException;

/**
 * The frames of the compact wire format: a tag byte, the body's length (u32, big-endian), the body.
 * Commands to the process are built in a buffer kept between them and written in one {@code write},
 * escaped: each byte 0 goes as 1 1, each byte 1 as 1 2, so the process can drop every NUL it reads (its
 * stdin watchdog's wake-ups, which may land anywhere; see its src/multilang/nulEscape.ts). The
 * process's frames are parsed into Storm's {@link ShellMsg}. The tags and value types mirror the
 * process's src/multilang/compact.ts.
 */
final class CompactFrames {
    static final int NEXT = 'N';
    static final int ACKS = 'K';
    static final int FAIL = 'F';
    static final int ACTIVATE = 'V';
    static final int DEACTIVATE = 'D';
    static final int TASK_IDS = 'T';

    static final int SYNC = 'S';
    static final int EMIT = 'E';
    static final int LOG = 'L';
    static final int ERROR = 'R';
    static final int METRICS = 'M';

    static final byte NULL = 'n';
    static final byte FALSE = 'f';
    static final byte TRUE = 't';
    static final byte INT32 = 'i';
    static final byte INT64 = 'l';
    static final byte FLOAT64 = 'd';
    static final byte STRING = 's';
    static final byte BYTES = 'b';
    static final byte JSON = 'j';

    private byte[] buf = new byte[4096];
    private int pos;
    /** The frame built last, escaped. */
    private byte[] wire = new byte[8192];

    /** A command frame: the deferred acks, then the failed id when {@code withId}. */
    void command(int tag, List<Object> acks, Object id, boolean withId) {
        pos = 0;
        put(tag);
        int lengthAt = pos;
        pos += 4;
        u32(acks.size());
        for (Object ack : acks) {
            value(ack);
        }
        if (withId) {
            value(id);
        }
        putInt(lengthAt, pos - lengthAt - 4);
    }

    void taskIds(List<Integer> ids) {
        pos = 0;
        put(TASK_IDS);
        u32(4 + 4 * ids.size());
        u32(ids.size());
        for (Integer id : ids) {
            u32(id);
        }
    }

    /** Writes the frame built last, escaped, in one piece. */
    void writeTo(OutputStream out) throws IOException {
        if (wire.length < 2 * pos) {
            wire = new byte[2 * pos];
        }
        int n = 0;
        for (int i = 0; i < pos; i++) {
            byte b = buf[i];
            if ((b & 0xfe) == 0) {
                wire[n++] = 1;
                wire[n++] = (byte) (b + 1);
            } else {
                wire[n++] = b;
            }
        }
        out.write(wire, 0, n);
        out.flush();
    }

    private void value(Object value) {
        if (value == null) {
            put(NULL);
        } else if (value instanceof String s) {
            put(STRING);
            text(s);
        } else if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            put(INT32);
            u32(((Number) value).intValue());
        } else if (value instanceof Long l) {
            put(INT64);
            ensure(8);
            ByteBuffer.wrap(buf, pos, 8).putLong(l);
            pos += 8;
        } else if (value instanceof Double || value instanceof Float) {
            put(FLOAT64);
            ensure(8);
            ByteBuffer.wrap(buf, pos, 8).putDouble(((Number) value).doubleValue());
            pos += 8;
        } else if (value instanceof Boolean b) {
            put(b ? TRUE : FALSE);
        } else if (value instanceof byte[] bytes) {
            put(BYTES);
            u32(bytes.length);
            ensure(bytes.length);
            System.arraycopy(bytes, 0, buf, pos, bytes.length);
            pos += bytes.length;
        } else {
            put(JSON);
            text(JSONValue.toJSONString(value));
        }
    }

    private void text(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        u32(bytes.length);
        ensure(bytes.length);
        System.arraycopy(bytes, 0, buf, pos, bytes.length);
        pos += bytes.length;
    }

    private void put(int b) {
        ensure(1);
        buf[pos++] = (byte) b;
    }

    private void u32(int v) {
        ensure(4);
        putInt(pos, v);
        pos += 4;
    }

    private void putInt(int at, int v) {
        buf[at] = (byte) (v >>> 24);
        buf[at + 1] = (byte) (v >>> 16);
        buf[at + 2] = (byte) (v >>> 8);
        buf[at + 3] = (byte) v;
    }

    private void ensure(int bytes) {
        if (pos + bytes > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + bytes));
        }
    }

    /** A frame from the process as the ShellMsg Storm's JSON serializer would have made of its JSON. */
    static ShellMsg parseReply(int tag, byte[] body) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(body);
        ShellMsg msg = new ShellMsg();
        switch (tag) {
            case SYNC -> msg.setCommand("sync");
            case EMIT -> {
                msg.setCommand("emit");
                int flags = b.get();
                msg.setNeedTaskIds((flags & 1) != 0);
                msg.setId(readValue(b));
                String stream = readText(b);
                msg.setStream(stream.isEmpty() ? CompactSerializer.DEFAULT_STREAM : stream);
                msg.setTask(b.getInt());
                int count = b.getInt();
                List<Object> tuple = new ArrayList<>(Math.min(count, body.length));
                for (int i = 0; i < count; i++) {
                    tuple.add(readValue(b));
                }
                msg.setTuple(tuple);
            }
            case LOG -> {
                msg.setCommand("log");
                msg.setLogLevel(b.get());
                msg.setMsg(readText(b));
            }
            case ERROR -> {
                msg.setCommand("error");
                msg.setMsg(readText(b));
            }
            case METRICS -> {
                msg.setCommand("metrics");
                msg.setMetricName(readText(b));
                msg.setMetricParams(readValue(b));
            }
            default -> throw new IOException(String.format("unknown frame tag 0x%02x", tag));
        }
        if (b.hasRemaining()) {
            throw new IOException(b.remaining() + " bytes left over after the frame's last field");
        }
        if (msg.getStream() == null) {
            msg.setStream(CompactSerializer.DEFAULT_STREAM);
        }
        return msg;
    }

    private static String readText(ByteBuffer b) {
        int length = b.getInt();
        if (length < 0 || length > b.remaining()) {
            throw new IllegalArgumentException("a text of " + (length & 0xffffffffL) + " bytes, " + b.remaining() + " left");
        }
        String s = new String(b.array(), b.position(), length, StandardCharsets.UTF_8);
        b.position(b.position() + length);
        return s;
    }

    private static Object readValue(ByteBuffer b) throws IOException {
        byte type = b.get();
        switch (type) {
            case NULL:
                return null;
            case FALSE:
                return Boolean.FALSE;
            case TRUE:
                return Boolean.TRUE;
            case INT32:
                return b.getInt();
            case INT64:
                return b.getLong();
            case FLOAT64:
                return b.getDouble();
            case STRING:
                return readText(b);
            case BYTES: {
                int length = b.getInt();
                if (length < 0 || length > b.remaining()) {
                    throw new IllegalArgumentException("bytes of length " + (length & 0xffffffffL) + ", " + b.remaining() + " left");
                }
                byte[] bytes = new byte[length];
                b.get(bytes);
                return bytes;
            }
            case JSON:
                try {
                    return JSONValue.parseWithException(readText(b));
                } catch (ParseException e) {
                    throw new IOException("a JSON value does not parse: " + e.getMessage(), e);
                }
            default:
                throw new IOException(String.format("unknown value type 0x%02x at byte %d", type, b.position() - 1));
        }
    }
}
