package io.github.kinesisshellspout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.multilang.JsonSerializer;
import org.apache.storm.multilang.ShellMsg;
import org.junit.jupiter.api.Test;

class LogLevelJsonSerializerTest {
    private static final String FRAMES = String.join("",
        "{\"command\":\"emit\",\"id\":\"s:1\",\"tuple\":[\"k\",\"grüße\"],\"need_task_ids\":false}\nend\n",
        "{\"command\":\"log\",\"msg\":\"a warning\",\"level\":3}\nend\n",
        "{\"command\":\"sync\"}\nend\n",
        "{\"command\":\"log\",\n\"msg\":\"two lines, level 4\",\n\"level\":4}\nend\n",
        "{\"command\":\"log\",\"msg\":\"no level\"}\nend\n",
        "{\"command\":\"logs\",\"msg\":\"not a log\",\"level\":4}\nend\n",
        "{\"command\":\"log\",\"msg\":\"end\\nend\",\"level\":1}\nend\n");

    /** Reads `in` through FrameLevels in chunks of `chunk` bytes; returns the bytes and the levels. */
    private static Object[] readAll(byte[] in, int chunk, int frames) throws IOException {
        LogLevelJsonSerializer.FrameLevels levels = new LogLevelJsonSerializer.FrameLevels(new ByteArrayInputStream(in));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[chunk];
        for (int n; (n = chunk == 1 ? single(levels, buffer) : levels.read(buffer, 0, chunk)) > 0; ) {
            out.write(buffer, 0, n);
        }
        List<Integer> seen = new ArrayList<>();
        for (int i = 0; i < frames + 1; i++) {
            seen.add(levels.next());
        }
        return new Object[] {out.toByteArray(), seen};
    }

    private static int single(InputStream in, byte[] buffer) throws IOException {
        int b = in.read();
        if (b < 0) {
            return -1;
        }
        buffer[0] = (byte) b;
        return 1;
    }

    @Test
    void framesPassUnchangedAndEachLogCommandsLevelIsTakenInOrderWhateverTheReadSizes() throws IOException {
        byte[] in = FRAMES.getBytes(StandardCharsets.UTF_8);
        for (int chunk : new int[] {1, 3, 7, 8192}) {
            Object[] result = readAll(in, chunk, 7);
            assertArrayEquals(in, (byte[]) result[0], "chunk " + chunk);
            assertEquals(List.of(-1, 3, -1, 4, -1, -1, 1, -1), result[1], "chunk " + chunk);
        }
    }

    @Test
    void theLogCommandsLevelReachesStormsMessage() throws Exception {
        // After the pid (connect() reads it, and skips its frame: that needs a topology context, so LocalCluster
        // shows it, in test/e2e), Storm reads one message per frame.
        String frames = "{\"command\":\"log\",\"msg\":\"bad configuration\",\"level\":4}\nend\n"
            + "{\"command\":\"log\",\"msg\":\"a warning\",\"level\":3}\nend\n"
            + "{\"command\":\"emit\",\"tuple\":[1],\"need_task_ids\":false}\nend\n"
            + "{\"command\":\"log\",\"msg\":\"debug\",\"level\":1}\nend\n";
        LogLevelJsonSerializer serializer = new LogLevelJsonSerializer();
        serializer.initialize(OutputStream.nullOutputStream(), new ByteArrayInputStream(frames.getBytes(StandardCharsets.UTF_8)));
        assertEquals(ShellMsg.ShellLogLevel.ERROR, serializer.readShellMsg().getLogLevel());
        assertEquals(ShellMsg.ShellLogLevel.WARN, serializer.readShellMsg().getLogLevel());
        assertEquals("emit", serializer.readShellMsg().getCommand());
        assertEquals(ShellMsg.ShellLogLevel.DEBUG, serializer.readShellMsg().getLogLevel());
    }

    @Test
    void usedInPlaceOfStormsJsonSerializerOnlyWhereStormDropsTheLevel() {
        Map<String, Object> conf = new HashMap<>();
        conf.put(Config.TOPOLOGY_MULTILANG_SERIALIZER, JsonSerializer.class.getName());
        String expected = LogLevelJsonSerializer.STORM_DROPS_LEVELS
            ? LogLevelJsonSerializer.class.getName()
            : JsonSerializer.class.getName();
        assertEquals(expected, KinesisShellSpout.processConf(conf).get(Config.TOPOLOGY_MULTILANG_SERIALIZER));
        conf.put(Config.TOPOLOGY_MULTILANG_SERIALIZER, "com.example.OtherSerializer");
        assertEquals("com.example.OtherSerializer", KinesisShellSpout.processConf(conf).get(Config.TOPOLOGY_MULTILANG_SERIALIZER));
    }

    @Test
    void stormsOwnSerializerDropsTheLevelExactlyBeforeStorm28() {
        String version = org.apache.storm.utils.VersionInfo.getVersion();
        String[] parts = version.split("\\.");
        boolean before28 = Integer.parseInt(parts[0]) == 2 && Integer.parseInt(parts[1]) < 8;
        assertEquals(before28, LogLevelJsonSerializer.STORM_DROPS_LEVELS, "Storm " + version);
    }
}
