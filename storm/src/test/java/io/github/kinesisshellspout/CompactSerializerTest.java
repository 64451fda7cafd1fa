package io.github.kinesisshellspout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.multilang.ShellMsg;
import org.apache.storm.multilang.SpoutMsg;
import org.apache.storm.shade.net.minidev.json.JSONObject;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.junit.jupiter.api.Test;

class CompactSerializerTest {
    private static final Map<String, Object> SPOUT_CONF = Map.of("kinesis.spout", Map.of("streamName", "s"));

    /** A frame as the process writes it. */
    private static byte[] frame(int tag, byte[] body) {
        return ByteBuffer.allocate(5 + body.length).put((byte) tag).putInt(body.length).put(body).array();
    }

    /** A command as the serializer writes it: the frame, each byte 0 as 1 1 and each byte 1 as 1 2. */
    private static byte[] command(int tag, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte b : frame(tag, body)) {
            if (b == 0 || b == 1) {
                out.write(1);
                out.write(b + 1);
            } else {
                out.write(b);
            }
        }
        return out.toByteArray();
    }

    /** What the process reads from escaped bytes. */
    private static byte[] unescape(byte[] escaped) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < escaped.length; i++) {
            out.write(escaped[i] == 1 ? escaped[++i] - 1 : escaped[i]);
        }
        return out.toByteArray();
    }

    private static final class Body {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Body u8(int v) {
            out.write(v);
            return this;
        }

        Body u32(int v) {
            out.writeBytes(ByteBuffer.allocate(4).putInt(v).array());
            return this;
        }

        Body text(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            u32(b.length);
            out.writeBytes(b);
            return this;
        }

        Body value(char type, String s) {
            return u8(type).text(s);
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static SpoutMsg spoutMsg(String command, Object id) {
        SpoutMsg msg = new SpoutMsg();
        msg.setCommand(command);
        msg.setId(id);
        return msg;
    }

    private static final byte[] COMPACT_PID = "{\"pid\":42,\"wire\":\"compact-2\"}\nend\n".getBytes(StandardCharsets.UTF_8);

    @Test
    void offersTheFormatAndReadsEveryReplyAsStormsJsonSerializerWould() throws Exception {
        byte[] emit = new Body().u8(0).value('s', "shardId-0:49").text("").u32(0).u32(7)
            .value('s', "pk é").u8('b').u32(3).u8(1).u8(0).u8(255).u8('i').u32(-5)
            .u8('l').u32(0x7f).u32(0).u8('n').u8('t').value('j', "{\"a\":[1,2]}").bytes();
        byte[] process = concat(COMPACT_PID,
            frame('E', emit),
            frame('L', new Body().u8(4).text("level four").bytes()),
            frame('R', new Body().text("went wrong").bytes()),
            frame('M', new Body().text("kinesis-spout").value('j', "{\"shards\":2}").bytes()),
            frame('E', new Body().u8(0).u8('n').text("dlq").u32(0).u32(1).value('s', "x").bytes()),
            frame('S', new byte[0]));
        ByteArrayOutputStream toProcess = new ByteArrayOutputStream();
        CompactSerializer s = new CompactSerializer();
        s.initialize(toProcess, new ByteArrayInputStream(process));
        assertEquals(42, s.handshake(SPOUT_CONF, "/tmp/pids", Map.of("taskid", 3)).intValue());
        assertTrue(s.isCompact());

        String handshake = toProcess.toString(StandardCharsets.UTF_8);
        assertTrue(handshake.endsWith("\nend\n"));
        JSONObject sent = (JSONObject) JSONValue.parse(handshake.substring(0, handshake.length() - 5));
        assertEquals("/tmp/pids", sent.get("pidDir"));
        assertEquals(List.of("compact-2"), ((Map<?, ?>) sent.get("conf")).get(CompactSerializer.WIRE_CONF_KEY));

        ShellMsg e = s.readShellMsg();
        assertEquals("emit", e.getCommand());
        assertEquals("shardId-0:49", e.getId());
        assertEquals("default", e.getStream());
        assertEquals(0, e.getTask());
        assertFalse(e.areTaskIdsNeeded());
        List<Object> t = e.getTuple();
        assertEquals("pk é", t.get(0));
        assertArrayEquals(new byte[] {1, 0, (byte) 255}, (byte[]) t.get(1));
        assertEquals(Integer.valueOf(-5), t.get(2));
        assertEquals(Long.valueOf(0x7f00000000L), t.get(3));
        assertNull(t.get(4));
        assertEquals(Boolean.TRUE, t.get(5));
        assertEquals(JSONValue.parse("{\"a\":[1,2]}"), t.get(6));
        assertEquals(JSONObject.class, t.get(6).getClass());

        ShellMsg log = s.readShellMsg();
        assertEquals("log", log.getCommand());
        assertEquals(ShellMsg.ShellLogLevel.ERROR, log.getLogLevel());
        assertEquals("level four", log.getMsg());
        ShellMsg error = s.readShellMsg();
        assertEquals("error", error.getCommand());
        assertEquals("went wrong", error.getMsg());
        ShellMsg metrics = s.readShellMsg();
        assertEquals("kinesis-spout", metrics.getMetricName());
        assertEquals(2, ((Map<?, ?>) metrics.getMetricParams()).get("shards"));
        ShellMsg dead = s.readShellMsg();
        assertNull(dead.getId());
        assertEquals("dlq", dead.getStream());
        assertEquals("sync", s.readShellMsg().getCommand());
    }

    @Test
    void defersAcksWhileActiveAndCarriesThemAheadOfTheNextCommand() throws Exception {
        byte[] syncs = concat(frame('S', new byte[0]), frame('S', new byte[0]), frame('S', new byte[0]),
            frame('S', new byte[0]), frame('S', new byte[0]));
        ByteArrayOutputStream toProcess = new ByteArrayOutputStream();
        CompactSerializer s = new CompactSerializer();
        s.initialize(toProcess, new ByteArrayInputStream(concat(COMPACT_PID, syncs)));
        s.handshake(SPOUT_CONF, "/tmp", Map.of());
        toProcess.reset();

        s.writeSpoutMsg(spoutMsg("activate", ""));
        assertArrayEquals(command('V', new Body().u32(0).bytes()), toProcess.toByteArray());
        assertEquals("sync", s.readShellMsg().getCommand());
        toProcess.reset();

        s.writeSpoutMsg(spoutMsg("ack", "a:1"));
        assertEquals("sync", s.readShellMsg().getCommand());
        s.writeSpoutMsg(spoutMsg("ack", "a:2"));
        assertEquals("sync", s.readShellMsg().getCommand());
        assertEquals(0, toProcess.size(), "deferred acks are not written");

        s.writeSpoutMsg(spoutMsg("fail", "a:3"));
        assertArrayEquals(command('F', new Body().u32(2).value('s', "a:1").value('s', "a:2").value('s', "a:3").bytes()),
            toProcess.toByteArray());
        assertEquals("sync", s.readShellMsg().getCommand());
        toProcess.reset();

        for (int i = 0; i < CompactSerializer.MAX_DEFERRED_ACKS - 1; i++) {
            s.writeSpoutMsg(spoutMsg("ack", i));
            assertEquals("sync", s.readShellMsg().getCommand());
        }
        assertEquals(0, toProcess.size());
        s.writeSpoutMsg(spoutMsg("ack", -1));
        byte[] batch = unescape(toProcess.toByteArray());
        assertEquals('K', batch[0]);
        assertEquals(CompactSerializer.MAX_DEFERRED_ACKS, ByteBuffer.wrap(batch, 5, 4).getInt());
        assertEquals("sync", s.readShellMsg().getCommand(), "the full batch's sync comes from the process");
        toProcess.reset();

        s.writeSpoutMsg(spoutMsg("deactivate", ""));
        assertEquals("sync", s.readShellMsg().getCommand());
        toProcess.reset();
        s.writeSpoutMsg(spoutMsg("ack", "b:1"));
        assertArrayEquals(command('K', new Body().u32(1).value('s', "b:1").bytes()), toProcess.toByteArray(),
            "deactivated, an ack goes at once: no next would carry it");
        assertEquals("sync", s.readShellMsg().getCommand());
    }

    @Test
    void writesNoNulByteToTheProcess() throws Exception {
        ByteArrayOutputStream toProcess = new ByteArrayOutputStream();
        CompactSerializer s = new CompactSerializer();
        s.initialize(toProcess, new ByteArrayInputStream(concat(COMPACT_PID, frame('S', new byte[0]))));
        s.handshake(SPOUT_CONF, "/tmp", Map.of());
        toProcess.reset();
        // An id whose bytes and length hold 0s, 1s and 2s, and a byte array of them.
        String id = "a\u0000\u0001\u0002b";
        s.writeSpoutMsg(spoutMsg("fail", id));
        byte[] written = toProcess.toByteArray();
        for (byte b : written) {
            assertTrue(b != 0, "a NUL byte reached the process");
        }
        assertArrayEquals(frame('F', new Body().u32(0).value('s', id).bytes()), unescape(written));
        assertArrayEquals(command('F', new Body().u32(0).value('s', id).bytes()), written);
    }

    @Test
    void speaksJsonToAProcessThatDoesNotAccept() throws Exception {
        byte[] process = ("{\"pid\":7}\nend\n{\"command\":\"log\",\"msg\":\"hi\",\"level\":3}\nend\n"
            + "{\"command\":\"sync\"}\nend\n").getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream toProcess = new ByteArrayOutputStream();
        CompactSerializer s = new CompactSerializer();
        s.initialize(toProcess, new ByteArrayInputStream(process));
        assertEquals(7, s.handshake(SPOUT_CONF, "/tmp", Map.of()).intValue());
        assertFalse(s.isCompact());
        toProcess.reset();
        s.writeSpoutMsg(spoutMsg("ack", "a:1"));
        assertEquals("{\"command\":\"ack\",\"id\":\"a:1\"}\nend\n".length(), toProcess.size());
        assertTrue(toProcess.toString(StandardCharsets.UTF_8).contains("\"id\":\"a:1\""));
        ShellMsg log = s.readShellMsg();
        assertEquals("hi", log.getMsg());
        assertEquals(ShellMsg.ShellLogLevel.WARN, log.getLogLevel());
        assertEquals("sync", s.readShellMsg().getCommand());
    }

    @Test
    void aFrameThatDoesNotParseIsAClearError() throws Exception {
        byte[] process = concat(COMPACT_PID, frame('E', new Body().u8(0).u8('?').bytes()), frame('Q', new byte[0]),
            new byte[] {'S', (byte) 0xff, 0, 0, 0});
        CompactSerializer s = new CompactSerializer();
        s.initialize(new ByteArrayOutputStream(), new ByteArrayInputStream(process));
        s.handshake(SPOUT_CONF, "/tmp", Map.of());
        IOException badValue = assertThrows(IOException.class, s::readShellMsg);
        assertTrue(badValue.getMessage().contains("unknown value type 0x3f"), badValue.getMessage());
        IOException badTag = assertThrows(IOException.class, s::readShellMsg);
        assertTrue(badTag.getMessage().contains("unknown frame tag 0x51"), badTag.getMessage());
        IOException corrupt = assertThrows(IOException.class, s::readShellMsg);
        assertTrue(corrupt.getMessage().contains("the stream is corrupt"), corrupt.getMessage());
    }

    @Test
    void onlyAKinesisSpoutsConfGetsTheCompactFormat() {
        assertTrue(CompactSerializer.isKinesisSpout(SPOUT_CONF));
        assertFalse(CompactSerializer.isKinesisSpout(Map.of("topology.name", "t")));
    }

    @Test
    void theSpoutSetsItForItsOwnTasksWhenAskedTo() {
        Map<String, Object> conf = Map.of("topology.name", "t");
        assertEquals(CompactSerializer.class.getName(),
            KinesisShellSpout.processConf(conf, true).get(Config.TOPOLOGY_MULTILANG_SERIALIZER));
        Object plain = KinesisShellSpout.processConf(conf, false).get(Config.TOPOLOGY_MULTILANG_SERIALIZER);
        assertTrue(plain == null || plain.equals(LogLevelJsonSerializer.class.getName()));
    }
}
