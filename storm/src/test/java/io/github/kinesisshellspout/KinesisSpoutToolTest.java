package io.github.kinesisshellspout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KinesisSpoutToolTest {
    @Test
    void extractsTheBundledScriptAsCommonJs(@TempDir Path dir) throws IOException {
        Path script = KinesisSpoutTool.extract(dir);
        assertEquals("kinesis-spout.cjs", script.getFileName().toString());
        try (InputStream in = KinesisSpoutTool.class.getResourceAsStream("/resources/kinesis-spout.cjs")) {
            assertArrayEquals(in.readAllBytes(), Files.readAllBytes(script));
        }
        assertTrue(Files.size(script) > 100_000);
    }

    @Test
    void extractsTheKclToolsDynamoDbClientBesideTheScript(@TempDir Path dir) throws IOException {
        Path script = KinesisSpoutTool.extract(dir);
        // The script requires it from its own folder when import --from kcl or export --to kcl runs.
        Path dynamo = script.resolveSibling(KinesisSpoutTool.DYNAMODB);
        try (InputStream in = KinesisSpoutTool.class.getResourceAsStream("/resources/" + KinesisSpoutTool.DYNAMODB)) {
            assertArrayEquals(in.readAllBytes(), Files.readAllBytes(dynamo));
        }
    }

    @Test
    void runsNodeWithTheArgumentsAndReturnsItsExitCode(@TempDir Path dir) throws Exception {
        Path script = dir.resolve("exit.cjs");
        Files.writeString(script, "process.exit(Number(process.argv[2]) + Number(process.argv[3]));");
        assertEquals(7, KinesisSpoutTool.run("node", script, new String[] {"3", "4"}));
    }

    @Test
    void aMissingNodeIsNamed(@TempDir Path dir) {
        IOException e = assertThrows(IOException.class, () -> KinesisSpoutTool.run("/nonexistent/node", dir.resolve("x.cjs"), new String[0]));
        assertTrue(e.getMessage().contains("KINESIS_SPOUT_NODE"), e.getMessage());
    }

    @Test
    void onlyAToolCommandLineReachesTheScript() {
        assertTrue(KinesisSpoutTool.isToolCommand(new String[] {"status", "--config", "c.json"}));
        assertTrue(KinesisSpoutTool.isToolCommand(new String[] {"reset"}));
        assertTrue(KinesisSpoutTool.isToolCommand(new String[] {"import", "--from", "storm-kinesis"}));
        assertTrue(KinesisSpoutTool.isToolCommand(new String[] {"--help"}));
        // Nothing, or a config file, would start the spout itself, waiting for Storm on the terminal.
        assertFalse(KinesisSpoutTool.isToolCommand(new String[0]));
        assertFalse(KinesisSpoutTool.isToolCommand(new String[] {"conf.json"}));
        assertFalse(KinesisSpoutTool.isToolCommand(new String[] {"stauts"}));
    }
}
